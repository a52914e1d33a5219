/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics endpoint: a minimal HTTP/1.0 and 1.1 server for GET (and
 * HEAD) /metrics, inside tlsd's epoll loop (docs/design.md, "Metrics": why
 * not libmicrohttpd).
 *
 * Two halves, as ctl.h. The pure half parses a request head into the status
 * code to answer; it does no I/O and is unit-tested and fuzzed. The server
 * half owns a listening TCP socket and its clients behind one epoll fd that
 * the daemon's loop watches; it never blocks, and bounds what a client may
 * cost: TLS_HTTP_MAX_CLIENTS at once (those over it are answered 503, as
 * many again at once without a request buffer; past that closed at once),
 * a request head of TLS_HTTP_MAX_HEAD bytes (431, or 414 for a request line
 * that long), the whole head within TLS_HTTP_REQUEST_NS of the connection,
 * or of its first byte on a kept connection (408: a client sending a byte
 * now and then cannot hold its slot), the
 * answer taken within TLS_HTTP_RESPONSE_NS, one read and one write per
 * client and wakeup. A 200 keeps an HTTP/1.1 connection open for the next
 * request (Prometheus reuses its connection from one scrape to the next)
 * unless the client says "Connection: close"; an idle connection is closed
 * after TLS_HTTP_IDLE_NS, or at once when a new client needs its slot.
 * Every other answer closes the connection.
 */
#ifndef TLS_HTTP_H
#define TLS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nbio.h"

#define TLS_HTTP_MAX_CLIENTS 16
#define TLS_HTTP_MAX_HEAD    (8 * 1024)
#define TLS_HTTP_REQUEST_NS  (5ULL * 1000 * 1000 * 1000)
#define TLS_HTTP_RESPONSE_NS (10ULL * 1000 * 1000 * 1000)
/* A kept connection's wait for its next request (Prometheus keeps an idle
 * connection 5 minutes; scrape intervals are seconds to a minute) */
#define TLS_HTTP_IDLE_NS (120ULL * 1000 * 1000 * 1000)
/* After the answer, what the client still sends is read and dropped for so
 * long (closing with unread input would reset the connection, and the
 * client could lose the answer). */
#define TLS_HTTP_LINGER_NS (1000ULL * 1000 * 1000)
#define TLS_HTTP_PATH	   "/metrics"

/* ---- the pure half ---- */

enum tls_http_method {
	TLS_HTTP_GET,
	TLS_HTTP_HEAD,
	TLS_HTTP_OTHER,
};

struct tls_http_req {
	enum tls_http_method method;
	unsigned int minor; /* HTTP/1.minor */
	bool openmetrics;   /* an Accept header asks for OpenMetrics (q > 0) */
	/* the connection ends with the answer: HTTP/1.0, "Connection: close",
	 * or a request with a body (which is not read) */
	bool close;
	/* the bytes up to and with the head's empty line, those of empty
	 * lines before the request line too (for a 200) */
	size_t head_len;
};

#define TLS_HTTP_INCOMPLETE 0

/*
 * The request head in buf[0..len): TLS_HTTP_INCOMPLETE while it is good so
 * far and may still end (len < TLS_HTTP_MAX_HEAD), else the status code to
 * answer: 200 for GET or HEAD of /metrics (a query string is ignored), 400
 * (malformed; an HTTP/1.1 request without Host), 404 (another path), 405
 * (another method), 414 (a request line of TLS_HTTP_MAX_HEAD bytes or
 * more), 431 (a longer head), 505 (not HTTP/1.x). A bad request line is
 * answered as soon as it is known, without waiting for the headers. What
 * follows the head (a pipelined request) is left for the next call.
 */
int tls_http_parse(const char *buf, size_t len, struct tls_http_req *req);
/* "OK", "Not Found", ... */
const char *tls_http_reason(int code);

/* metrics_listen: "ADDR:PORT" or "[ADDR6]:PORT", a literal address and a
 * port 1..65535. 0, or -EINVAL with a message naming what is wrong. */
int tls_http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *err,
			  size_t errlen);
/* 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104 */
bool tls_http_is_loopback(const struct sockaddr_storage *ss);

/* ---- the server ---- */

/*
 * The body of an answer, in pieces (nbio.h): of text, a buffer of the
 * handler's that the server frees, and of memory the handler shares among
 * answers (tlsd's kept metrics blocks), which ref keeps alive until the
 * server calls release(ref), once the answer is out or the client gone.
 */
#define TLS_HTTP_MAX_PIECES 7
struct tls_http_body {
	char *text; /* malloc'ed; NULL: none */
	size_t len;
	/* the body in order; none: text[0..len) whole */
	struct tls_piece piece[TLS_HTTP_MAX_PIECES];
	size_t npieces;
	void (*release)(void *ref); /* NULL: nothing shared */
	void *ref;
};

/* The body of a good request into *body (which comes zeroed), and its
 * content type (a static string): 0, or -errno (answered 500; what *body
 * holds is freed and released). */
typedef int (*tls_http_handler)(void *ctx, bool openmetrics, struct tls_http_body *body,
				const char **content_type);

struct tls_http;

/* Listen on addr (metrics_listen's syntax): 0, or -errno with a message
 * naming the address. */
int tls_http_open(const char *addr, tls_http_handler handler, void *ctx, struct tls_http **out);
/* The fd to watch for input (an epoll fd); then call tls_http_dispatch(). */
int tls_http_fd(const struct tls_http *h);
/* Accept, read, answer, write and time out whatever is due, without
 * blocking. */
void tls_http_dispatch(struct tls_http *h);
/* The address it listens on, as configured. */
const char *tls_http_addr(const struct tls_http *h);
/* Answers sent so far by status code, every code it may send (zeros too):
 * up to max pairs; returns how many codes there are. */
size_t tls_http_counts(const struct tls_http *h, unsigned int *codes, uint64_t *counts, size_t max);
/* Close every client and the listener. NULL is fine. */
void tls_http_close(struct tls_http *h);

#endif /* TLS_HTTP_H */
