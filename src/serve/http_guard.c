#include "krc/serve/http_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

/* A quiet connection past its head deadline is looked at again this often:
 * should bytes of a head arrive later, it is cut then. */
#define QUIET_RECHECK_MS 1000
#define RX_UNKNOWN UINT64_MAX

static const char *const reason_names[] = {
    "connection_limit", "per_address_limit", "head_timeout",
    "request_timeout",  "idle_timeout",      NULL,
};

struct krc_http_guard_conn {
    int used;
    int fd;
    int cut; /* cut by the reaper or by the idle timeout: counted once */
    enum krc_http_guard_phase phase;
    int64_t deadline_ms; /* 0: none */
    uint64_t rx_mark;    /* bytes received when the HEAD phase began */
    unsigned char key[16];
    char client[INET6_ADDRSTRLEN];
};

struct warn_state {
    int logged;
    int64_t last_ms;
    unsigned long long suppressed;
};

struct krc_http_guard {
    struct krc_http_guard_config cfg;
    struct krc_metric *rejected; /* NULL without a registry */
    pthread_mutex_t lock;        /* the slots, n_open, wake_at, stop */
    pthread_cond_t wake;
    struct krc_http_guard_conn *slots;
    unsigned n_slots;
    unsigned n_open;
    int64_t wake_at; /* when the reaper wakes next; INT64_MAX: when told */
    int stop;
    int running;
    pthread_t reaper;
    pthread_mutex_t warn_lock;
    struct warn_state warn[KRC_HTTP_GUARD_REASONS];
};

const char *krc_http_guard_reason_name(enum krc_http_guard_reason reason)
{
    return (unsigned)reason < KRC_HTTP_GUARD_REASONS ? reason_names[reason] : NULL;
}

/* ---- addresses ---- */

/* The address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form, so a client
 * counts once whichever socket family it came through) and as text. */
static void address_key(const struct sockaddr *sa, socklen_t len, unsigned char key[16], char *text,
                        size_t textsz)
{
    memset(key, 0, 16);
    snprintf(text, textsz, "unknown");
    if (sa == NULL) {
        return;
    }
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        key[10] = 0xff;
        key[11] = 0xff;
        memcpy(key + 12, &in->sin_addr, 4);
        inet_ntop(AF_INET, &in->sin_addr, text, (socklen_t)textsz);
    } else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        memcpy(key, &in6->sin6_addr, 16);
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, key + 12, text, (socklen_t)textsz);
        } else {
            inet_ntop(AF_INET6, &in6->sin6_addr, text, (socklen_t)textsz);
        }
    }
}

/* tcpi_state values (the kernel's include/net/tcp_states.h, reported as is
 * by TCP_INFO) in which the peer may still send: established, or our side
 * closing while theirs is open. In every other state its FIN or a reset has
 * arrived. */
#define TCP_STATE_ESTABLISHED 1
#define TCP_STATE_SYN_RECV 3
#define TCP_STATE_FIN_WAIT1 4
#define TCP_STATE_FIN_WAIT2 5

/* Bytes the kernel has received on a TCP socket (Linux >= 4.1), and whether
 * the peer can still send; -1 when it cannot tell. The count includes one
 * for the peer's FIN (it advances the receive sequence like a byte). */
static int rx_bytes(int fd, uint64_t *ret, int *peer_open)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
        (size_t)len <
            offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received)) {
        return -1;
    }
    *ret = ti.tcpi_bytes_received;
    if (peer_open != NULL) {
        *peer_open = ti.tcpi_state == TCP_STATE_ESTABLISHED ||
                     ti.tcpi_state == TCP_STATE_SYN_RECV || ti.tcpi_state == TCP_STATE_FIN_WAIT1 ||
                     ti.tcpi_state == TCP_STATE_FIN_WAIT2;
    }
    return 0;
}

/* ---- counting and the rate-limited warning ---- */

/* "10 s", or "1500 ms" when not whole seconds. */
static void duration_text(unsigned ms, char *out, size_t outsz)
{
    if (ms % 1000 == 0) {
        snprintf(out, outsz, "%u s", ms / 1000);
    } else {
        snprintf(out, outsz, "%u ms", ms);
    }
}

static void report(struct krc_http_guard *g, enum krc_http_guard_reason reason, const char *client)
{
    struct warn_state *w = &g->warn[reason];
    int64_t now = krc_clock_mono_ms();
    unsigned long long suppressed;
    char detail[160];
    char count[32];
    char d[32];

    if (g->rejected != NULL) {
        krc_metric_inc(g->rejected, (const char *[]){reason_names[reason]});
    }
    pthread_mutex_lock(&g->warn_lock);
    if (w->logged && now - w->last_ms < KRC_HTTP_GUARD_WARN_INTERVAL_MS) {
        w->suppressed++;
        pthread_mutex_unlock(&g->warn_lock);
        return;
    }
    suppressed = w->suppressed;
    w->suppressed = 0;
    w->last_ms = now;
    w->logged = 1;
    pthread_mutex_unlock(&g->warn_lock);
    switch (reason) {
    case KRC_HTTP_GUARD_CONNECTION_LIMIT:
        snprintf(detail, sizeof(detail), "refused: %u connections are open, the limit",
                 g->cfg.max_connections);
        break;
    case KRC_HTTP_GUARD_PER_ADDRESS_LIMIT:
        snprintf(detail, sizeof(detail),
                 "refused: this address has %u connections open, the limit per address",
                 g->cfg.max_per_address);
        break;
    case KRC_HTTP_GUARD_HEAD_TIMEOUT:
        duration_text(g->cfg.head_timeout_ms, d, sizeof(d));
        snprintf(detail, sizeof(detail),
                 "closed: request head not complete %s after the connection opened or its "
                 "previous response",
                 d);
        break;
    case KRC_HTTP_GUARD_REQUEST_TIMEOUT:
        duration_text(g->cfg.request_timeout_ms, d, sizeof(d));
        snprintf(detail, sizeof(detail),
                 "closed: request body not received, or response not taken, within %s", d);
        break;
    default:
        snprintf(detail, sizeof(detail),
                 "closed: nothing received or sent for %u s in the middle of a request",
                 g->cfg.idle_timeout_s);
        break;
    }
    snprintf(count, sizeof(count), "%llu", suppressed);
    {
        const struct krc_log_field f[] = {
            {"reason", reason_names[reason], 0},
            {"client", client, 0},
            {"detail", detail, 0},
            {"suppressed", count, 1},
        };
        krc_log_fields(KRC_LOG_WARN, "http connection rejected", f, sizeof(f) / sizeof(f[0]));
    }
}

/* ---- lifecycle ---- */

int krc_http_guard_new(const struct krc_http_guard_config *cfg, struct krc_http_guard **ret,
                       struct krc_error *err)
{
    const struct krc_metric_label label = {.name = "reason", .values = reason_names};
    const struct krc_metric_desc desc = {
        .type = KRC_METRIC_COUNTER,
        .name = KRC_HTTP_GUARD_METRIC,
        .help = "HTTP connections refused at accept (connection_limit, per_address_limit) or "
                "closed past a deadline (head_timeout, request_timeout, idle_timeout).",
        .labels = &label,
        .n_labels = 1};
    struct krc_http_guard *g;
    pthread_condattr_t attr;
    int rc;

    if (cfg->max_connections == 0 || cfg->max_connections > 100000) {
        return krc_error_set(err, KRC_EINVAL, "http server: max_connections %u: want 1..100000",
                             cfg->max_connections);
    }
    if (cfg->max_per_address == 0 || cfg->max_per_address > cfg->max_connections) {
        return krc_error_set(err, KRC_EINVAL,
                             "http server: max_connections_per_address %u: want 1..%u "
                             "(max_connections)",
                             cfg->max_per_address, cfg->max_connections);
    }
    if (cfg->head_timeout_ms == 0 || cfg->request_timeout_ms == 0) {
        return krc_error_set(err, KRC_EINVAL,
                             "http server: head and request timeouts must be positive");
    }
    g = krc_calloc(1, sizeof(*g));
    if (g == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "http server: out of memory");
    }
    g->cfg = *cfg;
    g->n_slots = cfg->max_connections + KRC_HTTP_GUARD_SLACK;
    g->slots = krc_calloc(g->n_slots, sizeof(*g->slots));
    if (g->slots == NULL) {
        krc_free(g);
        return krc_error_set(err, KRC_ENOMEM, "http server: out of memory");
    }
    pthread_mutex_init(&g->lock, NULL);
    pthread_mutex_init(&g->warn_lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wake, &attr);
    pthread_condattr_destroy(&attr);
    g->wake_at = INT64_MAX;
    if (cfg->metrics != NULL) {
        rc = krc_metrics_add(cfg->metrics, &desc, &g->rejected, err);
        if (rc < 0) {
            krc_http_guard_free(g);
            return rc;
        }
    }
    *ret = g;
    return 0;
}

unsigned krc_http_guard_capacity(const struct krc_http_guard *g)
{
    return g->n_slots;
}

/* Past its deadline: cut the connection, unless it is a quiet one in HEAD,
 * which is the idle timeout's. Returns the next time to look at it. */
static int64_t check_conn(struct krc_http_guard *g, struct krc_http_guard_conn *c, int64_t now)
{
    enum krc_http_guard_reason reason = KRC_HTTP_GUARD_REQUEST_TIMEOUT;

    if (now < c->deadline_ms) {
        return c->deadline_ms;
    }
    if (c->phase == KRC_HTTP_GUARD_HEAD) {
        uint64_t rx;
        int peer_open;

        /* Quiet, or closed by the peer (its FIN counts as a byte): no slow
         * head. The server closes the latter when it reads the end. */
        if (c->rx_mark != RX_UNKNOWN && rx_bytes(c->fd, &rx, &peer_open) == 0 &&
            (rx <= c->rx_mark || !peer_open)) {
            c->deadline_ms = now + QUIET_RECHECK_MS;
            return c->deadline_ms;
        }
        reason = KRC_HTTP_GUARD_HEAD_TIMEOUT;
    }
    /* Registered, so the socket is still this connection's: the server
     * closes it only after krc_http_guard_close, which waits for our lock.
     * A zero linger makes that close a reset that drops what is still
     * queued for the client: a cut response is not drained at its pace. */
    {
        const struct linger abort_close = {.l_onoff = 1, .l_linger = 0};

        (void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close));
    }
    (void)shutdown(c->fd, SHUT_RDWR);
    c->cut = 1;
    c->deadline_ms = 0;
    report(g, reason, c->client);
    return INT64_MAX;
}

static void *reaper_main(void *arg)
{
    struct krc_http_guard *g = arg;

    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        int64_t now = krc_clock_mono_ms();
        int64_t next = INT64_MAX;

        for (unsigned i = 0; i < g->n_slots; i++) {
            struct krc_http_guard_conn *c = &g->slots[i];
            int64_t t;

            if (!c->used || c->cut || c->deadline_ms == 0) {
                continue;
            }
            t = check_conn(g, c, now);
            if (t < next) {
                next = t;
            }
        }
        g->wake_at = next;
        if (next == INT64_MAX) {
            pthread_cond_wait(&g->wake, &g->lock);
        } else {
            struct timespec ts;

            ts.tv_sec = (time_t)(next / 1000);
            ts.tv_nsec = (long)(next % 1000) * 1000000L;
            (void)pthread_cond_timedwait(&g->wake, &g->lock, &ts);
        }
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int krc_http_guard_start(struct krc_http_guard *g, struct krc_error *err)
{
    int rc;

    if (g->running) {
        return 0;
    }
    g->stop = 0;
    g->wake_at = INT64_MAX;
    rc = pthread_create(&g->reaper, NULL, reaper_main, g);
    if (rc != 0) {
        return krc_error_set(err, KRC_EIO, "http server: cannot start the deadline thread: %s",
                             KRC_ERRNO_STR(rc));
    }
    g->running = 1;
    return 0;
}

void krc_http_guard_stop(struct krc_http_guard *g)
{
    if (g == NULL || !g->running) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->reaper, NULL);
    g->running = 0;
}

void krc_http_guard_free(struct krc_http_guard *g)
{
    if (g == NULL) {
        return;
    }
    krc_http_guard_stop(g);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->warn_lock);
    pthread_mutex_destroy(&g->lock);
    krc_free(g->slots);
    krc_free(g);
}

/* ---- connections ---- */

int krc_http_guard_admit(struct krc_http_guard *g, const struct sockaddr *addr, socklen_t addrlen)
{
    unsigned char key[16];
    char client[INET6_ADDRSTRLEN];
    int reason = -1;

    address_key(addr, addrlen, key, client, sizeof(client));
    pthread_mutex_lock(&g->lock);
    if (g->n_open >= g->cfg.max_connections) {
        reason = KRC_HTTP_GUARD_CONNECTION_LIMIT;
    } else {
        unsigned same = 0;

        for (unsigned i = 0; i < g->n_slots; i++) {
            same += g->slots[i].used && memcmp(g->slots[i].key, key, sizeof(key)) == 0;
        }
        if (same >= g->cfg.max_per_address) {
            reason = KRC_HTTP_GUARD_PER_ADDRESS_LIMIT;
        }
    }
    pthread_mutex_unlock(&g->lock);
    if (reason >= 0) {
        report(g, (enum krc_http_guard_reason)reason, client);
        return 0;
    }
    return 1;
}

/* Under g->lock: arm the deadline of the phase c is in, and wake the reaper
 * when it is earlier than the one it sleeps towards. */
static void arm(struct krc_http_guard *g, struct krc_http_guard_conn *c, int64_t now)
{
    switch (c->phase) {
    case KRC_HTTP_GUARD_HEAD:
        c->deadline_ms = now + g->cfg.head_timeout_ms;
        break;
    case KRC_HTTP_GUARD_BODY:
    case KRC_HTTP_GUARD_WRITE:
        c->deadline_ms = now + g->cfg.request_timeout_ms;
        break;
    default:
        c->deadline_ms = 0;
        break;
    }
    if (c->deadline_ms != 0 && c->deadline_ms < g->wake_at) {
        g->wake_at = c->deadline_ms;
        pthread_cond_signal(&g->wake);
    }
}

struct krc_http_guard_conn *krc_http_guard_open(struct krc_http_guard *g, int fd,
                                                const struct sockaddr *addr, socklen_t addrlen)
{
    struct krc_http_guard_conn *c = NULL;

    pthread_mutex_lock(&g->lock);
    for (unsigned i = 0; i < g->n_slots; i++) {
        if (!g->slots[i].used) {
            c = &g->slots[i];
            break;
        }
    }
    if (c != NULL) {
        memset(c, 0, sizeof(*c));
        c->used = 1;
        c->fd = fd;
        address_key(addr, addrlen, c->key, c->client, sizeof(c->client));
        c->phase = KRC_HTTP_GUARD_HEAD;
        c->rx_mark = 0; /* whatever arrived since the accept is a head's */
        arm(g, c, krc_clock_mono_ms());
        g->n_open++;
    }
    pthread_mutex_unlock(&g->lock);
    return c;
}

void krc_http_guard_close(struct krc_http_guard *g, struct krc_http_guard_conn *c)
{
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (c->used) {
        c->used = 0;
        c->fd = -1;
        g->n_open--;
    }
    pthread_mutex_unlock(&g->lock);
}

void krc_http_guard_phase(struct krc_http_guard *g, struct krc_http_guard_conn *c,
                          enum krc_http_guard_phase phase)
{
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (c->used && !c->cut) {
        c->phase = phase;
        if (phase == KRC_HTTP_GUARD_HEAD && rx_bytes(c->fd, &c->rx_mark, NULL) < 0) {
            c->rx_mark = RX_UNKNOWN;
        }
        arm(g, c, krc_clock_mono_ms());
    }
    pthread_mutex_unlock(&g->lock);
}

void krc_http_guard_idle_timeout(struct krc_http_guard *g, struct krc_http_guard_conn *c)
{
    char client[INET6_ADDRSTRLEN];
    int count = 0;

    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (c->used && !c->cut) {
        c->cut = 1;
        c->deadline_ms = 0;
        memcpy(client, c->client, sizeof(client));
        count = 1;
    }
    pthread_mutex_unlock(&g->lock);
    if (count) {
        report(g, KRC_HTTP_GUARD_IDLE_TIMEOUT, client);
    }
}

unsigned krc_http_guard_open_count(struct krc_http_guard *g)
{
    unsigned n;

    pthread_mutex_lock(&g->lock);
    n = g->n_open;
    pthread_mutex_unlock(&g->lock);
    return n;
}
