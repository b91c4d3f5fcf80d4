/* HTTP server: listen address parsing, the built-in routes over real
 * connections (libcurl through krc_http, and raw sockets for headers),
 * custom routes, the Host rule, the limits and deadlines against slow clients
 * and their metric and warnings, bind errors and a shutdown that lets
 * requests in flight finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/http.h"
#include "krc/util/log.h"
#include "krc/serve/http_guard.h"
#include "krc/serve/http_server.h"
#include "krc/util/mem.h"
#include "krc/serve/metrics.h"
#include "krc_test.h"

/* ---- helpers ---- */

struct result {
    long status;
    char content_type[128];
    char body[4096];
};

static int do_request(int port, const char *method, const char *path, const char *body,
                      struct result *out)
{
    struct krc_http *h;
    struct krc_http_request req;
    struct krc_http_response resp;
    struct krc_error err;
    char url[256];
    int rc;

    h = krc_http_new(NULL, &err);
    assert_non_null(h);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    memset(&req, 0, sizeof(req));
    req.method = method;
    req.url = url;
    req.body = body;
    req.body_len = body != NULL ? strlen(body) : 0;
    req.timeout_ms = 10000;
    krc_http_response_init(&resp);
    rc = krc_http_do(h, &req, &resp, &err);
    if (rc == 0) {
        out->status = resp.status;
        snprintf(out->content_type, sizeof(out->content_type), "%s", resp.content_type);
        snprintf(out->body, sizeof(out->body), "%s", resp.body != NULL ? resp.body : "");
    }
    krc_http_response_cleanup(&resp);
    krc_http_free(h);
    return rc;
}

static struct result get(int port, const char *path)
{
    struct result r;

    memset(&r, 0, sizeof(r));
    assert_int_equal(do_request(port, "GET", path, NULL, &r), 0);
    return r;
}

static int connect_to(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read until EOF or timeout; returns bytes read (out NUL-terminated). */
static size_t read_all(int fd, char *out, size_t size, int timeout_ms)
{
    size_t len = 0;
    int64_t deadline = krc_clock_mono_ms() + timeout_ms;

    while (len + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t left = deadline - krc_clock_mono_ms();
        ssize_t n;

        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            break;
        }
        n = read(fd, out + len, size - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
    }
    out[len] = '\0';
    return len;
}

/* Send a raw request with "Connection: close" and return the whole answer. */
static void raw(int port, const char *request, char *out, size_t size)
{
    int fd = connect_to(port);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    read_all(fd, out, size, 5000);
    close(fd);
}

struct checks {
    atomic_int alive;
    atomic_int ready;
};

static int check_alive(void *userdata, char *reason, size_t size)
{
    struct checks *c = userdata;

    if (atomic_load(&c->alive)) {
        return 1;
    }
    snprintf(reason, size, "watch loop stuck: no heartbeat for 93s\nsecond line");
    return 0;
}

static int check_ready(void *userdata, char *reason, size_t size)
{
    struct checks *c = userdata;

    if (atomic_load(&c->ready)) {
        return 1;
    }
    snprintf(reason, size, "initial pod list not synced yet");
    return 0;
}

struct fixture {
    struct krc_metrics *metrics;
    struct krc_metric *counter;
    struct krc_http_server *srv;
    struct checks checks;
    int port;
};

static void start_fixture(struct fixture *f, struct krc_http_server_config *cfg)
{
    struct krc_error err;
    struct krc_metric_desc d = {
        .type = KRC_METRIC_COUNTER, .name = "demo_events_total", .help = "Demo."};

    memset(f, 0, sizeof(*f));
    atomic_init(&f->checks.alive, 1);
    atomic_init(&f->checks.ready, 0);
    assert_int_equal(krc_metrics_new(&f->metrics, &err), 0);
    assert_int_equal(krc_metrics_add(f->metrics, &d, &f->counter, &err), 0);
    cfg->listen = cfg->listen != NULL ? cfg->listen : "127.0.0.1:0";
    cfg->metrics = f->metrics;
    cfg->liveness = check_alive;
    cfg->liveness_userdata = &f->checks;
    cfg->readiness = check_ready;
    cfg->readiness_userdata = &f->checks;
    krc_error_clear(&err);
    if (krc_http_server_new(cfg, &f->srv, &err) != 0) {
        fail_msg("new: %s", err.msg);
    }
}

static void run_fixture(struct fixture *f)
{
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_http_server_start(f->srv, &err) != 0) {
        fail_msg("start: %s", err.msg);
    }
    f->port = krc_http_server_port(f->srv);
    assert_true(f->port > 0 && f->port < 65536);
}

static void stop_fixture(struct fixture *f)
{
    krc_http_server_free(f->srv);
    krc_metrics_free(f->metrics);
}

/* ---- tests ---- */

static void expect_listen(const char *in, const char *host, int port)
{
    char h[256];
    int p = -1;
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_http_server_parse_listen(in, h, sizeof(h), &p, &err) != 0) {
        fail_msg("%s: %s", in, err.msg);
    }
    assert_string_equal(h, host);
    assert_int_equal(p, port);
}

static void expect_bad_listen(const char *in, const char *msg_part)
{
    char h[256];
    int p = -1;
    struct krc_error err;

    krc_error_clear(&err);
    assert_int_equal(krc_http_server_parse_listen(in, h, sizeof(h), &p, &err), KRC_EINVAL);
    assert_int_equal(p, -1);
    if (strstr(err.msg, msg_part) == NULL) {
        fail_msg("%s: \"%s\" lacks \"%s\"", in, err.msg, msg_part);
    }
}

static void test_parse_listen(void **state)
{
    (void)state;

    expect_listen("0.0.0.0:8080", "0.0.0.0", 8080);
    expect_listen("[::]:8080", "::", 8080);
    expect_listen("[::1]:65535", "::1", 65535);
    expect_listen("127.0.0.1:0", "127.0.0.1", 0);
    expect_listen(":9090", "0.0.0.0", 9090);
    expect_listen("localhost:80", "localhost", 80);
    expect_bad_listen("", "empty");
    expect_bad_listen("8080", "missing \":PORT\"");
    expect_bad_listen("0.0.0.0:", "port \"\"");
    expect_bad_listen("0.0.0.0:65536", "0..65535");
    expect_bad_listen("0.0.0.0:-1", "0..65535");
    expect_bad_listen("0.0.0.0:80x", "0..65535");
    expect_bad_listen("0.0.0.0:+80", "0..65535");
    expect_bad_listen("::1:8080", "brackets");
    expect_bad_listen("[::1]8080", "[IPV6]:PORT");
    expect_bad_listen("[]:8080", "empty IPv6");
    expect_bad_listen("a b:80", "offset 1");
}

static void test_builtin_routes(void **state)
{
    struct krc_http_server_config cfg = {0};
    struct fixture f;
    struct result r;
    struct krc_buf want;
    struct krc_error err;
    char text[8192];
    (void)state;

    start_fixture(&f, &cfg);
    assert_int_equal(krc_http_server_port(f.srv), 0); /* not started yet */
    run_fixture(&f);

    r = get(f.port, "/healthz");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    assert_string_equal(r.content_type, "text/plain; charset=utf-8");
    r = get(f.port, "/healthz?verbose");
    assert_int_equal(r.status, 200);

    krc_metric_add(f.counter, NULL, 41);
    r = get(f.port, "/metrics");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
    krc_buf_init(&want, 1 << 20);
    assert_int_equal(krc_metrics_render(f.metrics, &want, &err), 0);
    assert_string_equal(r.body, krc_buf_str(&want));
    assert_non_null(strstr(r.body, "\ndemo_events_total 41\n"));
    krc_buf_cleanup(&want);

    r = get(f.port, "/nope");
    assert_int_equal(r.status, 404);
    r = get(f.port, "/healthz/");
    assert_int_equal(r.status, 404);
    r = get(f.port, "/");
    assert_int_equal(r.status, 404);

    memset(&r, 0, sizeof(r));
    assert_int_equal(do_request(f.port, "POST", "/metrics", "x=1", &r), 0);
    assert_int_equal(r.status, 405);
    assert_int_equal(do_request(f.port, "DELETE", "/readyz", NULL, &r), 0);
    assert_int_equal(r.status, 405);
    assert_int_equal(do_request(f.port, "POST", "/nope", "x", &r), 0);
    assert_int_equal(r.status, 404);

    raw(f.port,
        "PUT /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", text,
        sizeof(text));
    assert_non_null(strstr(text, "HTTP/1.1 405 "));
    assert_non_null(strstr(text, "\r\nAllow: GET, HEAD\r\n"));

    /* HEAD: headers with the length of the body, no body */
    raw(f.port, "HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", text,
        sizeof(text));
    assert_non_null(strstr(text, "HTTP/1.1 200 "));
    assert_non_null(strstr(text, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert_non_null(strstr(text, "\r\n\r\n"));
    assert_string_equal(strstr(text, "\r\n\r\n"), "\r\n\r\n");

    /* keep-alive: two requests on one connection */
    {
        int fd = connect_to(f.port);
        const char *two = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
                          "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        const char *p;
        int n = 0;

        assert_true(fd >= 0);
        assert_int_equal(write(fd, two, strlen(two)), (ssize_t)strlen(two));
        read_all(fd, text, sizeof(text), 5000);
        close(fd);
        for (p = text; (p = strstr(p, "HTTP/1.1 200 ")) != NULL; p++) {
            n++;
        }
        assert_int_equal(n, 2);
    }
    stop_fixture(&f);
}

static void test_checks_flip(void **state)
{
    struct krc_http_server_config cfg = {0};
    struct fixture f;
    struct result r;
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);

    r = get(f.port, "/readyz");
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "initial pod list not synced yet\n");
    assert_string_equal(r.content_type, "text/plain; charset=utf-8");
    atomic_store(&f.checks.ready, 1);
    r = get(f.port, "/readyz");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    atomic_store(&f.checks.ready, 0);
    assert_int_equal(get(f.port, "/readyz").status, 503);

    /* liveness is independent of readiness; the reason stays one line */
    assert_int_equal(get(f.port, "/healthz").status, 200);
    atomic_store(&f.checks.alive, 0);
    r = get(f.port, "/healthz");
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "watch loop stuck: no heartbeat for 93s second line\n");
    atomic_store(&f.checks.alive, 1);
    assert_int_equal(get(f.port, "/healthz").status, 200);
    stop_fixture(&f);
}

/* A server without a registry or checks: always live and ready, no /metrics. */
static void test_defaults(void **state)
{
    struct krc_http_server_config cfg = {.listen = "127.0.0.1:0"};
    struct krc_http_server *srv = NULL;
    struct krc_error err;
    int port;
    (void)state;

    assert_int_equal(krc_http_server_new(&cfg, &srv, &err), 0);
    assert_int_equal(krc_http_server_start(srv, &err), 0);
    assert_int_equal(krc_http_server_start(srv, &err), KRC_EINVAL);
    port = krc_http_server_port(srv);
    assert_int_equal(get(port, "/healthz").status, 200);
    assert_int_equal(get(port, "/readyz").status, 200);
    assert_int_equal(get(port, "/metrics").status, 404);
    krc_http_server_stop(srv);
    krc_http_server_stop(srv); /* twice is fine */
    assert_int_equal(krc_http_server_port(srv), 0);
    /* a stopped server starts again, on a new port */
    assert_int_equal(krc_http_server_start(srv, &err), 0);
    assert_int_equal(get(krc_http_server_port(srv), "/healthz").status, 200);
    krc_http_server_free(srv);
    krc_http_server_free(NULL);

    cfg.listen = "nonsense";
    assert_int_equal(krc_http_server_new(&cfg, &srv, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "nonsense"));
}

struct echo_state {
    atomic_int calls;
};

static int echo(const struct krc_http_server_request *req, struct krc_http_server_response *resp,
                void *userdata)
{
    struct echo_state *st = userdata;
    const char *ua = krc_http_server_request_header(req, "x-test");
    const char *q = krc_http_server_request_query(req, "q");

    atomic_fetch_add(&st->calls, 1);
    if (q != NULL && strcmp(q, "fail") == 0) {
        return KRC_EIO;
    }
    if (q != NULL && strcmp(q, "big") == 0) {
        for (int i = 0; i < 100; i++) {
            if (krc_buf_append_str(&resp->body, "0123456789") < 0) {
                return KRC_ETOOBIG;
            }
        }
        return 0;
    }
    resp->status = 201;
    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    assert_int_equal(krc_http_server_response_header(resp, "Mcp-Session-Id", "abc"), 0);
    assert_int_equal(krc_http_server_response_header(resp, "X-Bad", "a\r\nInjected: 1"),
                     KRC_EINVAL);
    assert_int_equal(krc_http_server_response_header(resp, "Bad Name", "x"), KRC_EINVAL);
    return krc_buf_printf(&resp->body,
                          "{\"method\":\"%s\",\"path\":\"%s\",\"len\":%zu,"
                          "\"body\":\"%s\",\"x-test\":\"%s\"}",
                          req->method, req->path, req->body_len, req->body, ua != NULL ? ua : "");
}

static void test_custom_route(void **state)
{
    struct krc_http_server_config cfg = {0};
    struct fixture f;
    struct echo_state st;
    struct krc_error err;
    struct result r;
    char text[8192];
    char big[2048];
    (void)state;

    atomic_init(&st.calls, 0);
    start_fixture(&f, &cfg);
    assert_int_equal(
        krc_http_server_route(f.srv, "/mcp",
                              KRC_HTTP_METHOD_POST | KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_DELETE,
                              1000, 500, echo, &st, &err),
        0);
    assert_int_equal(
        krc_http_server_route(f.srv, "/mcp", KRC_HTTP_METHOD_POST, 0, 0, echo, &st, &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg, "already exists"));
    assert_int_equal(
        krc_http_server_route(f.srv, "/healthz", KRC_HTTP_METHOD_GET, 0, 0, echo, &st, &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg, "built in"));
    assert_int_equal(
        krc_http_server_route(f.srv, "mcp", KRC_HTTP_METHOD_GET, 0, 0, echo, &st, &err),
        KRC_EINVAL);
    assert_int_equal(krc_http_server_route(f.srv, "/x", 0, 0, 0, echo, &st, &err), KRC_EINVAL);
    run_fixture(&f);
    assert_int_equal(
        krc_http_server_route(f.srv, "/late", KRC_HTTP_METHOD_GET, 0, 0, echo, &st, &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg, "after start"));

    memset(&r, 0, sizeof(r));
    assert_int_equal(do_request(f.port, "POST", "/mcp", "{\"a\":1}", &r), 0);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.content_type, "application/json");
    assert_string_equal(r.body, "{\"method\":\"POST\",\"path\":\"/mcp\",\"len\":7,"
                                "\"body\":\"{\"a\":1}\",\"x-test\":\"\"}");

    raw(f.port, "DELETE /mcp HTTP/1.1\r\nHost: t\r\nX-Test: hello\r\nConnection: close\r\n\r\n",
        text, sizeof(text));
    assert_non_null(strstr(text, "HTTP/1.1 201 "));
    assert_non_null(strstr(text, "\r\nMcp-Session-Id: abc\r\n"));
    assert_null(strstr(text, "Injected"));
    assert_non_null(strstr(text, "\"x-test\":\"hello\""));

    assert_int_equal(do_request(f.port, "PUT", "/mcp", "x", &r), 0);
    assert_int_equal(r.status, 405);
    assert_int_equal(get(f.port, "/mcp?q=fail").status, 500);
    assert_string_equal(get(f.port, "/mcp?q=fail").body, "internal error\n");
    assert_int_equal(get(f.port, "/mcp?q=big").status, 500); /* over max_response 500 */

    /* bodies over max_body: 413 from Content-Length, before the handler runs */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    atomic_store(&st.calls, 0);
    assert_int_equal(do_request(f.port, "POST", "/mcp", big, &r), 0);
    assert_int_equal(r.status, 413);
    /* ... and from a chunked body that grows too large */
    {
        int fd = connect_to(f.port);
        char req[4096];
        int n = snprintf(req, sizeof(req),
                         "POST /mcp HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
                         "Connection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
                         (unsigned)strlen(big), big);

        assert_true(fd >= 0 && n > 0 && (size_t)n < sizeof(req));
        assert_int_equal(write(fd, req, (size_t)n), n);
        read_all(fd, text, sizeof(text), 5000);
        close(fd);
        assert_non_null(strstr(text, "HTTP/1.1 413 "));
    }
    assert_int_equal(atomic_load(&st.calls), 0);
    stop_fixture(&f);
}

static void test_bind_errors(void **state)
{
    struct krc_http_server_config cfg = {0};
    struct fixture f;
    struct krc_http_server *other = NULL;
    struct krc_error err;
    char listen[64];
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", f.port);
    cfg.listen = listen;
    cfg.metrics = NULL; /* one server per registry */
    assert_int_equal(krc_http_server_new(&cfg, &other, &err), 0);
    krc_error_clear(&err);
    assert_int_equal(krc_http_server_start(other, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, listen));
    assert_non_null(strstr(err.msg, KRC_ERRNO_STR(EADDRINUSE)));
    assert_int_equal(krc_http_server_port(other), 0);
    krc_http_server_free(other);

    /* an address this machine does not have */
    cfg.listen = "192.0.2.1:0";
    assert_int_equal(krc_http_server_new(&cfg, &other, &err), 0);
    assert_int_equal(krc_http_server_start(other, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, "192.0.2.1:0"));
    assert_non_null(strstr(err.msg, KRC_ERRNO_STR(EADDRNOTAVAIL)));
    krc_http_server_free(other);
    stop_fixture(&f);
}

static void test_ipv6(void **state)
{
    struct krc_http_server_config cfg = {.listen = "[::1]:0"};
    struct krc_http_server *srv = NULL;
    struct krc_error err;
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 sa;
    char text[1024];
    (void)state;

    if (fd < 0) {
        skip();
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = in6addr_loopback;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        skip(); /* no IPv6 loopback here */
    }
    close(fd);
    assert_int_equal(krc_http_server_new(&cfg, &srv, &err), 0);
    krc_error_clear(&err);
    if (krc_http_server_start(srv, &err) != 0) {
        fail_msg("start: %s", err.msg);
    }
    fd = socket(AF_INET6, SOCK_STREAM, 0);
    sa.sin6_port = htons((uint16_t)krc_http_server_port(srv));
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    {
        const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    }
    read_all(fd, text, sizeof(text), 5000);
    close(fd);
    assert_non_null(strstr(text, "HTTP/1.1 200 "));
    krc_http_server_free(srv);
}

/* ---- limits and deadlines (http_guard) ---- */

/* A TCP connection to the server from the loopback address `from`
 * ("127.0.0.1", "127.0.0.2", ...: all of 127/8 is this machine's). */
static int connect_from(int port, const char *from)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, from, &sa.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    sa.sin_port = htons((uint16_t)port);
    assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr), 1);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Milliseconds until the server closed fd (EOF or reset; any answer is
 * read and dropped), or -1 when it is still open after timeout_ms. */
static int64_t ms_until_closed(int fd, int timeout_ms)
{
    int64_t t0 = krc_clock_mono_ms();
    char buf[4096];

    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t left = t0 + timeout_ms - krc_clock_mono_ms();
        ssize_t n;

        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            return -1;
        }
        n = read(fd, buf, sizeof(buf));
        if (n <= 0) {
            return krc_clock_mono_ms() - t0;
        }
    }
}

/* A connection from `from` is closed by the server without a word (a
 * refusal at accept: the caller checks which reason was counted). */
static void expect_closed_from(int port, const char *from)
{
    int fd = connect_from(port, from);

    assert_true(fd >= 0);
    assert_true(ms_until_closed(fd, 3000) >= 0);
    close(fd);
}

/* krc_http_connections_rejected_total{reason=...} as /metrics renders it. */
static double rejected(struct fixture *f, const char *reason)
{
    char series[128];

    snprintf(series, sizeof(series), "krc_http_connections_rejected_total{reason=\"%s\"}", reason);
    return krc_test_metric(f->metrics, series);
}

/* Wait (bounded) for the counter to reach `want`: the server counts on its
 * own threads. */
static void expect_rejected(struct fixture *f, const char *reason, double want)
{
    int64_t t0 = krc_clock_mono_ms();

    while (rejected(f, reason) < want && krc_clock_mono_ms() - t0 < 5000) {
        krc_clock_sleep_ms(10, NULL);
    }
    if (rejected(f, reason) != want) {
        fail_msg("rejected{reason=\"%s\"} = %g, want %g", reason, rejected(f, reason), want);
    }
}

/* One GET /healthz on a fresh connection from `from`: 1 when it is answered
 * 200 within timeout_ms. */
static int healthz_from(int port, const char *from, int timeout_ms)
{
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    char text[1024];
    int fd = connect_from(port, from);
    int ok;

    if (fd < 0) {
        return 0;
    }
    ok = write(fd, req, strlen(req)) == (ssize_t)strlen(req);
    ok = ok && read_all(fd, text, sizeof(text), timeout_ms) > 0 &&
         strstr(text, "HTTP/1.1 200 ") != NULL;
    close(fd);
    return ok;
}

static void send_str(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* Every series of the metric exists from the start, at 0. */
static void test_rejected_metric_series(void **state)
{
    static const char *const reasons[] = {"connection_limit", "per_address_limit", "head_timeout",
                                          "request_timeout", "idle_timeout"};
    struct krc_http_server_config cfg = {0};
    struct krc_http_server *other = NULL;
    struct krc_error err;
    struct fixture f;
    (void)state;

    start_fixture(&f, &cfg);
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        assert_true(rejected(&f, reasons[i]) == 0);
    }
    /* a second server on the same registry is refused, by name */
    krc_error_clear(&err);
    assert_int_equal(krc_http_server_new(&cfg, &other, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "krc_http_connections_rejected_total"));
    /* a per-address limit over the total is a mistake the message names */
    cfg.metrics = NULL;
    cfg.max_connections = 4;
    cfg.max_connections_per_address = 5;
    assert_int_equal(krc_http_server_new(&cfg, &other, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "max_connections_per_address 5"));
    stop_fixture(&f);
}

/* RFC 9112 section 3.2: an HTTP/1.1 request without Host, and any request with
 * two Host lines or an invalid one, gets 400 before routing; HTTP/1.0 may
 * leave it out. */
static void test_host_header(void **state)
{
    static const struct {
        const char *request;
        const char *want;
    } cases[] = {
        {"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.0\r\n\r\n", "HTTP/1.1 200 "},
        {"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
         "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: a:80:90\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: a%zz\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /healthz HTTP/1.1\r\nHost: krc.krc.svc:8080\r\nConnection: close\r\n\r\n",
         "HTTP/1.1 200 "},
        {"GET /healthz HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 "},
        {"GET /healthz HTTP/1.1\r\nHost: 10.0.0.7\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 "},
        {"GET /healthz HTTP/1.1\r\nHost: my%2Dhost\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 "},
        {"GET /healthz HTTP/1.1\r\nhost: lower\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 "},
        /* empty: a target without an authority (RFC 9112 section 3.2) */
        {"GET /healthz HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 "},
    };
    struct krc_http_server_config cfg = {0};
    struct fixture f;
    char text[2048];
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        raw(f.port, cases[i].request, text, sizeof(text));
        if (strncmp(text, cases[i].want, strlen(cases[i].want)) != 0) {
            fail_msg("%s: got \"%.40s\", want \"%s\"", cases[i].request, text, cases[i].want);
        }
    }
    raw(f.port, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", text, sizeof(text));
    assert_non_null(strstr(text, "\r\n\r\nbad request: an HTTP/1.1 request needs a Host header\n"));
    raw(f.port, "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n", text,
        sizeof(text));
    assert_non_null(strstr(text, "more than one Host header"));
    stop_fixture(&f);
}

/* One address gets max_connections_per_address; the next is closed at once
 * and counted, while another address is served; a freed slot is usable. */
static void test_per_address_limit(void **state)
{
    struct krc_http_server_config cfg = {.max_connections = 8, .max_connections_per_address = 3};
    struct fixture f;
    int held[3];
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    for (int i = 0; i < 3; i++) {
        held[i] = connect_from(f.port, "127.0.0.1");
        assert_true(held[i] >= 0);
        send_str(held[i], "GET /healthz HTTP/1.1\r\n"); /* a head that never ends */
    }
    /* the server takes connections in order: the fourth is over the limit */
    expect_closed_from(f.port, "127.0.0.1");
    expect_rejected(&f, "per_address_limit", 1);
    assert_true(rejected(&f, "connection_limit") == 0);
    assert_true(healthz_from(f.port, "127.0.0.2", 2000));
    /* another refusal, then a slot freed by the client is taken again */
    expect_closed_from(f.port, "127.0.0.1");
    expect_rejected(&f, "per_address_limit", 2);
    close(held[0]);
    {
        int ok = 0;

        for (int i = 0; i < 100 && !ok; i++) {
            ok = healthz_from(f.port, "127.0.0.1", 2000);
            if (!ok) {
                krc_clock_sleep_ms(20, NULL);
            }
        }
        assert_true(ok);
    }
    close(held[1]);
    close(held[2]);
    stop_fixture(&f);
}

/* max_connections in all, whatever the addresses; refused at once, counted. */
static void test_connection_limit(void **state)
{
    struct krc_http_server_config cfg = {.max_connections = 4, .max_connections_per_address = 2};
    const char *from[] = {"127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"};
    struct fixture f;
    int held[4];
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    for (int i = 0; i < 4; i++) {
        held[i] = connect_from(f.port, from[i]);
        assert_true(held[i] >= 0);
        send_str(held[i], "GET /");
    }
    expect_closed_from(f.port, "127.0.0.3");
    expect_rejected(&f, "connection_limit", 1);
    assert_true(rejected(&f, "per_address_limit") == 0);
    for (int i = 0; i < 4; i++) {
        close(held[i]);
    }
    stop_fixture(&f);
}

struct trickle {
    int fd;
    int every_ms;
    atomic_int stop;
    atomic_int bytes; /* sent before the server closed it */
};

/* One byte of an endless request head every every_ms: activity that an
 * idle timer never cuts. */
static void *trickle_main(void *arg)
{
    struct trickle *t = arg;
    const char *head = "GET /healthz HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    for (size_t i = 0; !atomic_load(&t->stop); i = (i + 1) % strlen(head)) {
        if (send(t->fd, head + i, 1, MSG_NOSIGNAL) != 1) {
            break;
        }
        atomic_fetch_add(&t->bytes, 1);
        krc_clock_sleep_ms(t->every_ms, &t->stop);
    }
    return NULL;
}

/* The head has head_timeout_s in all, however often the client sends a
 * byte: cut and counted, while others are served. A connection that sends
 * nothing is the idle timeout's: not cut at the head deadline, not counted. */
static void test_head_deadline(void **state)
{
    struct krc_http_server_config cfg = {.head_timeout_s = 1, .connection_timeout_s = 4};
    struct fixture f;
    struct trickle t = {.every_ms = 100};
    pthread_t th;
    int64_t t0;
    int64_t closed_after;
    int quiet;
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    quiet = connect_from(f.port, "127.0.0.3");
    assert_true(quiet >= 0);
    t.fd = connect_from(f.port, "127.0.0.1");
    assert_true(t.fd >= 0);
    atomic_init(&t.stop, 0);
    atomic_init(&t.bytes, 0);
    t0 = krc_clock_mono_ms();
    assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
    assert_true(healthz_from(f.port, "127.0.0.2", 1000));
    closed_after = ms_until_closed(t.fd, 8000);
    atomic_store(&t.stop, 1);
    pthread_join(th, NULL);
    close(t.fd);
    /* cut after the deadline (1 s), well before the idle timeout (4 s) that
     * the trickle keeps resetting */
    if (closed_after < 0 || closed_after > 3000 || krc_clock_mono_ms() - t0 < 900) {
        fail_msg("trickling head closed after %lld ms, want 1000..3000", (long long)closed_after);
    }
    assert_true(atomic_load(&t.bytes) >= 5);
    expect_rejected(&f, "head_timeout", 1);
    /* the silent connection lived past the head deadline, and the idle
     * timeout (4 s from its accept) ends it, uncounted */
    closed_after = ms_until_closed(quiet, 8000);
    close(quiet);
    if (closed_after < 0 || krc_clock_mono_ms() - t0 < 3500) {
        fail_msg("silent connection closed %lld ms after the start, want the idle timeout",
                 (long long)(krc_clock_mono_ms() - t0));
    }
    /* the quiet client's close can meet the reaper's look: not a slow head */
    if (rejected(&f, "head_timeout") != 1 || rejected(&f, "idle_timeout") != 0) {
        fail_msg("head_timeout %g, idle_timeout %g, want 1 and 0", rejected(&f, "head_timeout"),
                 rejected(&f, "idle_timeout"));
    }
    stop_fixture(&f);
}

/* On a kept-alive connection the next head has head_timeout_s from the end of
 * the previous response; waiting quietly for it is not a slow head. */
static void test_keepalive_head_deadline(void **state)
{
    struct krc_http_server_config cfg = {.head_timeout_s = 1, .connection_timeout_s = 3};
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    struct fixture f;
    char text[1024];
    int64_t t0;
    int64_t closed_after;
    int a;
    int b;
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    a = connect_from(f.port, "127.0.0.1");
    b = connect_from(f.port, "127.0.0.1");
    assert_true(a >= 0 && b >= 0);
    t0 = krc_clock_mono_ms();
    send_str(a, req);
    send_str(b, req);
    /* (read_all waits its whole 300 ms: the connections stay open) */
    assert_true(read_all(a, text, sizeof(text), 300) > 0 && strstr(text, " 200 ") != NULL);
    assert_true(read_all(b, text, sizeof(text), 300) > 0 && strstr(text, " 200 ") != NULL);
    /* b starts a second head and stops half-way: cut 1 s after its response */
    send_str(b, "GET /healthz HTTP/1.1\r\nHo");
    closed_after = ms_until_closed(b, 6000);
    close(b);
    closed_after = closed_after < 0 ? -1 : krc_clock_mono_ms() - t0;
    if (closed_after < 900 || closed_after > 2500) {
        fail_msg("half a second head closed %lld ms after the first, want about 1000",
                 (long long)closed_after);
    }
    expect_rejected(&f, "head_timeout", 1);
    /* a stays quiet: closed by the idle timeout (3 s), not counted */
    closed_after = ms_until_closed(a, 6000);
    close(a);
    if (closed_after < 0 || krc_clock_mono_ms() - t0 < 2500) {
        fail_msg("quiet kept-alive connection closed %lld ms after its response",
                 (long long)(krc_clock_mono_ms() - t0));
    }
    assert_true(rejected(&f, "head_timeout") == 1);
    assert_true(rejected(&f, "idle_timeout") == 0);
    stop_fixture(&f);
}

static int big_handler(const struct krc_http_server_request *req,
                       struct krc_http_server_response *resp, void *userdata)
{
    (void)req;
    (void)userdata;
    for (int i = 0; i < 64 * 1024; i++) {
        int rc = krc_buf_append_str(&resp->body, "0123456789abcdef0123456789abcdef"
                                                 "0123456789abcdef0123456789abcdef"
                                                 "0123456789abcdef0123456789abcdef"
                                                 "0123456789abcdef0123456789abcdef");
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int body_handler(const struct krc_http_server_request *req,
                        struct krc_http_server_response *resp, void *userdata)
{
    (void)userdata;
    return krc_buf_printf(&resp->body, "got %zu\n", req->body_len);
}

/* The body and then the response have request_timeout_s each; a client
 * silent in the middle of a request meets the idle timeout, counted too. */
static void test_request_deadline(void **state)
{
    struct krc_http_server_config cfg = {.request_timeout_s = 1, .connection_timeout_s = 3};
    struct fixture f;
    struct krc_error err;
    int64_t closed_after;
    int fd;
    (void)state;

    start_fixture(&f, &cfg);
    assert_int_equal(
        krc_http_server_route(f.srv, "/body", KRC_HTTP_METHOD_POST, 0, 0, body_handler, NULL, &err),
        0);
    assert_int_equal(krc_http_server_route(f.srv, "/big", KRC_HTTP_METHOD_GET, 0,
                                           32u * 1024u * 1024u, big_handler, NULL, &err),
                     0);
    run_fixture(&f);

    /* a body sent one byte every 100 ms: cut 1 s after the head */
    fd = connect_from(f.port, "127.0.0.1");
    send_str(fd, "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n");
    {
        int64_t t0 = krc_clock_mono_ms();

        closed_after = -1;
        for (int i = 0; i < 60; i++) {
            struct pollfd p = {.fd = fd, .events = POLLIN};

            if (send(fd, "x", 1, MSG_NOSIGNAL) != 1 || poll(&p, 1, 100) > 0) {
                closed_after = krc_clock_mono_ms() - t0;
                break;
            }
        }
    }
    close(fd);
    if (closed_after < 800 || closed_after > 3000) {
        fail_msg("trickling body closed after %lld ms, want about 1000", (long long)closed_after);
    }
    expect_rejected(&f, "request_timeout", 1);

    /* a complete body is answered */
    {
        char text[1024];

        raw(f.port,
            "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
            text, sizeof(text));
        assert_non_null(strstr(text, "\r\n\r\ngot 3\n"));
    }

    /* an 8 MiB response taken 4 KiB every 50 ms: cut 1 s after it was queued,
     * with a reset that drops what the kernel still holds for the client */
    {
        int rcvbuf = 4096;
        char buf[4096];
        int64_t t0;
        ssize_t n = 1;
        size_t total = 0;

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
        {
            struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f.port)};

            sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        }
        send_str(fd, "GET /big HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        t0 = krc_clock_mono_ms();
        while (n > 0 && krc_clock_mono_ms() - t0 < 20000) {
            n = read(fd, buf, sizeof(buf));
            total += n > 0 ? (size_t)n : 0;
            krc_clock_sleep_ms(50, NULL);
        }
        closed_after = krc_clock_mono_ms() - t0;
        close(fd);
        if (n > 0 || total >= 8u * 1024u * 1024u || closed_after > 4000) {
            fail_msg("slow reader: %zu bytes in %lld ms, want a cut after about 1 s", total,
                     (long long)closed_after);
        }
        expect_rejected(&f, "request_timeout", 2);
    }

    /* Content-Length 10 and nothing sent: the body's deadline (1 s) comes
     * before the idle timeout (3 s) */
    fd = connect_from(f.port, "127.0.0.1");
    send_str(fd, "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n");
    closed_after = ms_until_closed(fd, 8000);
    close(fd);
    if (closed_after < 0 || closed_after > 3000) {
        fail_msg("silent body closed after %lld ms", (long long)closed_after);
    }
    expect_rejected(&f, "request_timeout", 3);
    assert_true(rejected(&f, "idle_timeout") == 0);
    stop_fixture(&f);
}

/* A client silent in the middle of a request for connection_timeout_s is cut
 * by the idle timeout, counted as idle_timeout. */
static void test_idle_timeout_counted(void **state)
{
    struct krc_http_server_config cfg = {.request_timeout_s = 30, .connection_timeout_s = 1};
    struct fixture f;
    struct krc_error err;
    int64_t closed_after;
    int fd;
    (void)state;

    start_fixture(&f, &cfg);
    assert_int_equal(
        krc_http_server_route(f.srv, "/body", KRC_HTTP_METHOD_POST, 0, 0, body_handler, NULL, &err),
        0);
    run_fixture(&f);
    fd = connect_from(f.port, "127.0.0.1");
    send_str(fd, "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    closed_after = ms_until_closed(fd, 8000);
    close(fd);
    if (closed_after < 0 || closed_after > 4000) {
        fail_msg("silent body closed after %lld ms, want about 1000", (long long)closed_after);
    }
    expect_rejected(&f, "idle_timeout", 1);
    assert_true(rejected(&f, "request_timeout") == 0);
    stop_fixture(&f);
}

/* The warning: at most one line per reason per interval, naming the client
 * and the reason; the next line says how many were not logged. */
static void test_rejection_warnings(void **state)
{
    struct krc_http_server_config cfg = {.max_connections = 8,
                                         .max_connections_per_address = 1,
                                         .head_timeout_s = 60,
                                         .connection_timeout_s = 60};
    char path[] = "/tmp/krc-test-http-log-XXXXXX";
    struct fixture f;
    char *text;
    size_t len;
    int held;
    int logfd;
    int lines = 0;
    (void)state;

    logfd = mkstemp(path);
    assert_true(logfd >= 0);
    krc_log_setup(KRC_LOG_WARN, KRC_LOG_JSON, logfd);
    start_fixture(&f, &cfg);
    run_fixture(&f);
    held = connect_from(f.port, "127.0.0.1");
    send_str(held, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 5; i++) {
        expect_closed_from(f.port, "127.0.0.1");
    }
    expect_rejected(&f, "per_address_limit", 5);
    /* after the interval, the next refusal is logged with the 4 left out */
    krc_clock_sleep_ms(KRC_HTTP_GUARD_WARN_INTERVAL_MS + 200, NULL);
    expect_closed_from(f.port, "127.0.0.1");
    expect_rejected(&f, "per_address_limit", 6);
    close(held);
    stop_fixture(&f);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, 2);
    close(logfd);
    text = krc_test_read_file(path, &len);
    unlink(path);
    assert_non_null(text);
    for (const char *p = text; (p = strstr(p, "\"msg\":\"http connection rejected\"")) != NULL;
         p++) {
        lines++;
    }
    if (lines != 2 ||
        strstr(text, "\"reason\":\"per_address_limit\",\"client\":\"127.0.0.1\"") == NULL ||
        strstr(text, "\"suppressed\":0}") == NULL || strstr(text, "\"suppressed\":4}") == NULL) {
        fail_msg("want 2 warnings, the second with suppressed 4:\n%s", text);
    }
    assert_null(strstr(text, "GET")); /* nothing of a request */
    free(text);
}

/* The acceptance scenario in small: one address holds more slow connections
 * than it may, sending a byte every 500 ms; another address is answered
 * within 1 s throughout. */
static void test_slow_address_does_not_starve_others(void **state)
{
    struct krc_http_server_config cfg = {
        .max_connections = 16, .max_connections_per_address = 4, .head_timeout_s = 2};
    struct fixture f;
    struct trickle t[12];
    pthread_t th[12];
    int64_t t0;
    int answered = 0;
    (void)state;

    start_fixture(&f, &cfg);
    run_fixture(&f);
    for (int i = 0; i < 12; i++) {
        t[i].fd = connect_from(f.port, "127.0.0.1");
        t[i].every_ms = 500;
        atomic_init(&t[i].stop, 0);
        atomic_init(&t[i].bytes, 0);
        assert_int_equal(pthread_create(&th[i], NULL, trickle_main, &t[i]), 0);
    }
    t0 = krc_clock_mono_ms();
    while (krc_clock_mono_ms() - t0 < 4000) {
        int64_t t1 = krc_clock_mono_ms();

        if (!healthz_from(f.port, "127.0.0.2", 1000) || krc_clock_mono_ms() - t1 > 1000) {
            fail_msg("/healthz from another address not answered within 1 s");
        }
        answered++;
        krc_clock_sleep_ms(100, NULL);
    }
    for (int i = 0; i < 12; i++) {
        atomic_store(&t[i].stop, 1);
        pthread_join(th[i], NULL);
        close(t[i].fd);
    }
    assert_true(answered >= 10);
    assert_true(rejected(&f, "per_address_limit") >= 8);
    assert_true(rejected(&f, "head_timeout") >= 4);
    stop_fixture(&f);
}

struct slow {
    atomic_int started;
    atomic_int finished;
    int delay_ms;
};

static int slow_handler(const struct krc_http_server_request *req,
                        struct krc_http_server_response *resp, void *userdata)
{
    struct slow *s = userdata;
    (void)req;

    atomic_store(&s->started, 1);
    krc_clock_sleep_ms(s->delay_ms, NULL);
    atomic_store(&s->finished, 1);
    return krc_buf_append_str(&resp->body, "finished\n");
}

struct client {
    int port;
    int rc;
    struct result r;
};

static void *client_thread(void *arg)
{
    struct client *c = arg;

    c->rc = do_request(c->port, "GET", "/slow", NULL, &c->r);
    return NULL;
}

static void *stop_thread(void *arg)
{
    krc_http_server_stop(arg);
    return NULL;
}

static void test_shutdown_finishes_in_flight(void **state)
{
    struct krc_http_server_config cfg = {.drain_timeout_ms = 5000};
    struct fixture f;
    struct slow s;
    struct client c;
    struct krc_error err;
    pthread_t t;
    pthread_t stopper;
    int64_t t0;
    int port;
    int fd;
    (void)state;

    atomic_init(&s.started, 0);
    atomic_init(&s.finished, 0);
    s.delay_ms = 400;
    start_fixture(&f, &cfg);
    assert_int_equal(
        krc_http_server_route(f.srv, "/slow", KRC_HTTP_METHOD_GET, 0, 0, slow_handler, &s, &err),
        0);
    run_fixture(&f);
    port = f.port;
    memset(&c, 0, sizeof(c));
    c.port = port;
    c.rc = -1;
    assert_int_equal(pthread_create(&t, NULL, client_thread, &c), 0);
    t0 = krc_clock_mono_ms();
    while (!atomic_load(&s.started) && krc_clock_mono_ms() - t0 < 5000) {
        krc_clock_sleep_ms(5, NULL);
    }
    assert_true(atomic_load(&s.started));
    assert_int_equal(pthread_create(&stopper, NULL, stop_thread, f.srv), 0);
    /* new connections are refused at once, while the request is still running */
    t0 = krc_clock_mono_ms();
    while ((fd = connect_to(port)) >= 0 && krc_clock_mono_ms() - t0 < 5000) {
        close(fd);
        krc_clock_sleep_ms(5, NULL);
    }
    assert_int_equal(fd, -1);
    assert_false(atomic_load(&s.finished));
    pthread_join(stopper, NULL);
    assert_true(atomic_load(&s.finished));
    pthread_join(t, NULL);
    /* ... but the request in flight got its whole answer */
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.r.status, 200);
    assert_string_equal(c.r.body, "finished\n");
    assert_int_equal(krc_http_server_port(f.srv), 0);
    stop_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_listen),
        cmocka_unit_test(test_builtin_routes),
        cmocka_unit_test(test_checks_flip),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_custom_route),
        cmocka_unit_test(test_bind_errors),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_rejected_metric_series),
        cmocka_unit_test(test_host_header),
        cmocka_unit_test(test_per_address_limit),
        cmocka_unit_test(test_connection_limit),
        cmocka_unit_test(test_head_deadline),
        cmocka_unit_test(test_keepalive_head_deadline),
        cmocka_unit_test(test_request_deadline),
        cmocka_unit_test(test_idle_timeout_counted),
        cmocka_unit_test(test_rejection_warnings),
        cmocka_unit_test(test_slow_address_does_not_starve_others),
        cmocka_unit_test(test_shutdown_finishes_in_flight),
    };

    return cmocka_run_group_tests(tests, krc_test_http_init, krc_test_http_cleanup);
}
