/* The HTTP endpoint's guard against slow and greedy clients (issue 24): who
 * may connect, how long each part of a request may take, and what is
 * counted and logged when a connection is refused or cut. http_server.c
 * calls it from libmicrohttpd's callbacks; the guard itself never sees
 * libmicrohttpd, only the client's address and the connection's socket.
 *
 * Limits, checked when a connection is accepted (krc_http_guard_admit):
 *   - at most `max_connections` open at once (reason "connection_limit");
 *   - at most `max_per_address` of them from one IP address (the exact
 *     address; an IPv4 client of an IPv6 socket counts as its IPv4 address)
 *     (reason "per_address_limit").
 * A refused connection is closed at once, so a client over its share never
 * holds a thread or a slot.
 *
 * Deadlines, each counted from a fixed moment, not reset by activity:
 *   - the request head (request line and headers) must be complete
 *     `head_timeout_ms` after the connection was accepted or its previous
 *     response was sent (reason "head_timeout");
 *   - the request body must be received, and the response taken by the
 *     client, each within `request_timeout_ms` (reason "request_timeout").
 * The handler's own time is not limited here. A reaper thread shuts down
 * (shutdown(2), never close(2)) the socket of a connection past its deadline;
 * it touches a socket only while the connection is registered, under the
 * lock that krc_http_guard_close also takes, and the server closes the
 * socket only after krc_http_guard_close: a socket number reused by a new
 * connection is never shut down by mistake.
 * A connection whose client has sent nothing at all since the head deadline
 * began (read from the kernel's byte count, TCP_INFO) is left to the idle
 * timeout instead: that is a quiet keep-alive connection or an idle one, not
 * a slow request. (Bytes that arrived before the previous response ended
 * count as before: the rest of a pipelined head sent that early and never
 * finished is left to the idle timeout too.) Such a connection is looked at
 * again every second, and cut once bytes arrive. krc_http_guard_idle_timeout
 * counts the idle timeout when it cut a request (reason "idle_timeout").
 *
 * Each refusal and cut is counted in krc_http_connections_rejected_total
 * {reason} (every reason's series exists from the start) and logged at
 * warning as "http connection rejected" with the client's address, the
 * reason and a detail, at most one line per reason every 10 s: the line
 * says how many of that reason were not logged since the previous one.
 * Nothing of a request is ever logged.
 *
 * Thread-safe: admit, open and close run on the server's accepting thread,
 * phase and idle_timeout on connection threads. */
#ifndef KRC_HTTP_GUARD_H
#define KRC_HTTP_GUARD_H

#include <stddef.h>
#include <sys/socket.h>

#include "krc/util/error.h"
#include "krc/serve/metrics.h"

/* Slots beyond max_connections: libmicrohttpd's own limits are set this far
 * above the guard's, as a backstop that the guard always reaches first. */
#define KRC_HTTP_GUARD_SLACK 8
#define KRC_HTTP_GUARD_WARN_INTERVAL_MS 10000
#define KRC_HTTP_GUARD_METRIC "krc_http_connections_rejected_total"

enum krc_http_guard_reason {
    KRC_HTTP_GUARD_CONNECTION_LIMIT = 0,
    KRC_HTTP_GUARD_PER_ADDRESS_LIMIT,
    KRC_HTTP_GUARD_HEAD_TIMEOUT,
    KRC_HTTP_GUARD_REQUEST_TIMEOUT,
    KRC_HTTP_GUARD_IDLE_TIMEOUT,
    KRC_HTTP_GUARD_REASONS
};

/* Where a connection is; each phase but HANDLER has a deadline. */
enum krc_http_guard_phase {
    KRC_HTTP_GUARD_HEAD = 0, /* waiting for a complete request head */
    KRC_HTTP_GUARD_BODY,     /* head complete, reading the body */
    KRC_HTTP_GUARD_HANDLER,  /* the handler runs: no deadline */
    KRC_HTTP_GUARD_WRITE,    /* the response is queued and being sent */
};

struct krc_http_guard_config {
    unsigned max_connections;    /* > 0 */
    unsigned max_per_address;    /* 1..max_connections */
    unsigned head_timeout_ms;    /* > 0 */
    unsigned request_timeout_ms; /* > 0 */
    unsigned idle_timeout_s;     /* the server's idle timeout, for the log line only */
    struct krc_metrics *metrics; /* borrowed; NULL: no metric */
};

struct krc_http_guard;
struct krc_http_guard_conn;

/* The reason's label value ("connection_limit", ...); NULL past the end. */
const char *krc_http_guard_reason_name(enum krc_http_guard_reason reason);

/* Check the configuration, allocate every slot and register the metric in
 * cfg->metrics (once per registry: a second guard on the same registry gets
 * KRC_EINVAL). KRC_EINVAL names the field that is wrong. */
int krc_http_guard_new(const struct krc_http_guard_config *cfg, struct krc_http_guard **ret,
                       struct krc_error *err);
/* Connections the slot table holds: max_connections + KRC_HTTP_GUARD_SLACK. */
unsigned krc_http_guard_capacity(const struct krc_http_guard *g);

/* Start / stop the reaper thread (stop joins it; both are idempotent). Stop
 * it only once every connection is closed. KRC_EIO when the thread cannot
 * start. */
int krc_http_guard_start(struct krc_http_guard *g, struct krc_error *err);
void krc_http_guard_stop(struct krc_http_guard *g);
void krc_http_guard_free(struct krc_http_guard *g);

/* May a connection from `addr` be accepted? 1: yes; 0: no, counted and
 * logged with its reason. The caller closes a refused connection. Call
 * admit and the open that follows from one thread (the accepting thread), so
 * no other admission comes between them. */
int krc_http_guard_admit(struct krc_http_guard *g, const struct sockaddr *addr, socklen_t addrlen);

/* Register an accepted connection (its socket and peer address); it starts
 * in the HEAD phase. NULL when every slot is taken (the caller then shuts the
 * connection down). */
struct krc_http_guard_conn *krc_http_guard_open(struct krc_http_guard *g, int fd,
                                                const struct sockaddr *addr, socklen_t addrlen);
/* Unregister before the socket is closed. Accepts NULL. */
void krc_http_guard_close(struct krc_http_guard *g, struct krc_http_guard_conn *c);

/* Enter a phase: its deadline counts from now. Entering HEAD again (after a
 * response on a kept-alive connection) also notes the bytes received so far,
 * to tell a quiet connection from a slow head. Accepts NULL. */
void krc_http_guard_phase(struct krc_http_guard *g, struct krc_http_guard_conn *c,
                          enum krc_http_guard_phase phase);

/* The server's idle timeout cut a request of this connection: counted as
 * "idle_timeout" (unless the reaper had already cut it). Accepts NULL. */
void krc_http_guard_idle_timeout(struct krc_http_guard *g, struct krc_http_guard_conn *c);

/* Connections registered now (for tests). */
unsigned krc_http_guard_open_count(struct krc_http_guard *g);

#endif
