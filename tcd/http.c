// SPDX-License-Identifier: GPL-2.0-only
/* The metrics endpoint's HTTP server: http.h. */
#define _GNU_SOURCE /* asprintf */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "clock.h"
#include "log.h"
#include "nbio.h"

/* ---------------------------------------------------------------------- */
/* The pure half: the request head (RFC 9112, section 2 and 3)            */

/* token characters (RFC 9110, section 5.6.2) */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* visible characters: a request target has no others */
static bool vchar(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

/* A field value's: visible, space, tab, and obs-text (bytes >= 0x80) */
static bool field_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/*
 * The request line p[0..n): complete (its line feed seen; n without CR LF)
 * or a part that may go on. 0 with method, target and version known; or
 * TLS_HTTP_INCOMPLETE; or the status to answer.
 */
static int request_line(const char *p, size_t n, bool complete, struct tls_http_req *r,
			size_t *target, size_t *target_len)
{
	static const char ver[] = "HTTP/1.1"; /* its shape: "HTTP/" DIGIT "." DIGIT */
	size_t i = 0, j, k;

	while (i < n && tchar(p[i]))
		i++;
	if (i == n)
		return complete ? 400 : TLS_HTTP_INCOMPLETE;
	if (i == 0 || p[i] != ' ')
		return 400;
	for (j = i + 1; j < n && vchar(p[j]); j++)
		;
	if (j == n) /* a request line without a version (HTTP/0.9) too */
		return complete ? 400 : TLS_HTTP_INCOMPLETE;
	if (j == i + 1 || p[j] != ' ')
		return 400;
	for (k = 0; j + 1 + k < n; k++) {
		unsigned char c = p[j + 1 + k];
		bool ok = k >= sizeof(ver) - 1 ? false :
			  k == 5 || k == 7     ? c >= '0' && c <= '9' :
						 c == (unsigned char)ver[k];

		if (!ok)
			return 400;
	}
	/* a version may still be followed by more (400): wait for the line */
	if (k < sizeof(ver) - 1 || !complete)
		return complete ? 400 : TLS_HTTP_INCOMPLETE;
	if (p[j + 1 + 5] != '1')
		return 505;
	r->minor = (unsigned int)(p[j + 1 + 7] - '0');
	if (i == 3 && !memcmp(p, "GET", 3))
		r->method = TLS_HTTP_GET;
	else if (i == 4 && !memcmp(p, "HEAD", 4))
		r->method = TLS_HTTP_HEAD;
	else
		r->method = TLS_HTTP_OTHER;
	*target = i + 1;
	*target_len = j - i - 1;
	return 0;
}

static bool path_ok(const char *t, size_t n)
{
	size_t pl = sizeof(TLS_HTTP_PATH) - 1;

	return n >= pl && !memcmp(t, TLS_HTTP_PATH, pl) && (n == pl || t[pl] == '?');
}

/* Does the q parameter of an Accept element say "not at all" (q=0)? */
static bool q_zero(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		if ((p[i] != 'q' && p[i] != 'Q') || p[i + 1] != '=' ||
		    (i && p[i - 1] != ';' && p[i - 1] != ' ' && p[i - 1] != '\t'))
			continue;
		for (i += 2; i < n && (p[i] == '0' || p[i] == '.'); i++)
			;
		return i == n || p[i] == ';' || p[i] == ' ' || p[i] == '\t';
	}
	return false;
}

/* The next element of a comma-separated list v[0..n) from *at on, trimmed
 * of spaces and tabs, in [*b, *e); *at moves past it. false: no more. */
static bool list_next(const char *v, size_t n, size_t *at, size_t *b, size_t *e)
{
	size_t s = *at, t;

	if (s >= n)
		return false;
	for (t = s; t < n && v[t] != ','; t++)
		;
	*at = t + 1;
	while (s < t && (v[s] == ' ' || v[s] == '\t'))
		s++;
	while (t > s && (v[t - 1] == ' ' || v[t - 1] == '\t'))
		t--;
	*b = s;
	*e = t;
	return true;
}

/* An Accept value: a list of media ranges with parameters. */
static bool accepts_openmetrics(const char *v, size_t n)
{
	static const char om[] = "application/openmetrics-text";
	size_t at = 0, s, e;

	while (list_next(v, n, &at, &s, &e)) {
		if (e - s >= sizeof(om) - 1 && !strncasecmp(v + s, om, sizeof(om) - 1)) {
			size_t t = s + sizeof(om) - 1;

			while (t < e && (v[t] == ' ' || v[t] == '\t'))
				t++;
			if ((t == e || v[t] == ';') && !q_zero(v + t, e - t))
				return true;
		}
	}
	return false;
}

/* Does a Connection value (a list of tokens) hold "close"? */
static bool conn_close(const char *v, size_t n)
{
	size_t at = 0, s, e;

	while (list_next(v, n, &at, &s, &e))
		if (e - s == 5 && !strncasecmp(v + s, "close", 5))
			return true;
	return false;
}

/* One header field line p[0..n) (no CR LF): 0, or 400. */
static int field_line(const char *p, size_t n, struct tls_http_req *r, unsigned int *hosts)
{
	size_t i = 0, v;

	while (i < n && tchar(p[i]))
		i++;
	/* no name, white space before the colon, a folded line: 400 */
	if (i == 0 || i == n || p[i] != ':')
		return 400;
	for (v = i + 1; v < n; v++)
		if (!field_char(p[v]))
			return 400;
	for (v = i + 1; v < n && (p[v] == ' ' || p[v] == '\t'); v++)
		;
	if (i == 4 && !strncasecmp(p, "host", 4))
		(*hosts)++;
	else if (i == 6 && !strncasecmp(p, "accept", 6) && accepts_openmetrics(p + v, n - v))
		r->openmetrics = true;
	else if (i == 10 && !strncasecmp(p, "connection", 10) && conn_close(p + v, n - v))
		r->close = true;
	/* a body is not read: after it the connection could not go on */
	else if ((i == 14 && !strncasecmp(p, "content-length", 14) &&
		  strspn(p + v, "0 \t") != n - v) ||
		 (i == 17 && !strncasecmp(p, "transfer-encoding", 17)))
		r->close = true;
	return 0;
}

/* The line at p[0..avail): 1 with its length without CR LF in *n and with
 * them in *adv; TLS_HTTP_INCOMPLETE if its line feed has not come; 400 for
 * a CR anywhere but right before the line feed. */
static int next_line(const char *p, size_t avail, size_t *n, size_t *adv)
{
	const char *lf = memchr(p, '\n', avail);
	size_t len = lf ? (size_t)(lf - p) : avail;
	const char *cr = memchr(p, '\r', len);

	if (cr && cr != p + len - 1)
		return 400; /* a bare CR: RFC 9112 lets a server refuse it */
	if (!lf)
		return TLS_HTTP_INCOMPLETE;
	*n = cr ? len - 1 : len;
	*adv = len + 1;
	return 1;
}

int tls_http_parse(const char *buf, size_t len, struct tls_http_req *r)
{
	size_t off = 0, n = 0, adv = 0, target = 0, tlen = 0;
	unsigned int hosts = 0;
	bool full = len >= TLS_HTTP_MAX_HEAD;
	int ret;

	memset(r, 0, sizeof(*r));
	if (full)
		len = TLS_HTTP_MAX_HEAD;
	/* RFC 9112 2.2: empty lines before the request line are ignored */
	while (off < len &&
	       (buf[off] == '\n' || (buf[off] == '\r' && off + 1 < len && buf[off + 1] == '\n')))
		off += buf[off] == '\r' ? 2 : 1;
	ret = next_line(buf + off, len - off, &n, &adv);
	if (ret == 400)
		return 400;
	if (ret == TLS_HTTP_INCOMPLETE) {
		size_t part = len - off;

		if (part && buf[off + part - 1] == '\r') /* its LF may come next */
			part--;
		ret = request_line(buf + off, part, false, r, &target, &tlen);
		if (ret >= 400)
			return ret;
		/* good so far: wait, unless it fills the whole head */
		return !full ? TLS_HTTP_INCOMPLETE : part ? 414 : 400;
	}
	ret = request_line(buf + off, n, true, r, &target, &tlen);
	if (ret)
		return ret;
	if (!path_ok(buf + off + target, tlen))
		return 404;
	if (r->method == TLS_HTTP_OTHER)
		return 405;
	for (off += adv;;) {
		ret = next_line(buf + off, len - off, &n, &adv);
		if (ret == TLS_HTTP_INCOMPLETE)
			return full ? 431 : TLS_HTTP_INCOMPLETE;
		if (ret == 400)
			return ret;
		if (n == 0) { /* the end of the head */
			r->head_len = off + adv;
			break;
		}
		if (field_line(buf + off, n, r, &hosts))
			return 400;
		off += adv;
	}
	/* RFC 9112 3.2: HTTP/1.1 needs exactly one Host; 1.0 at most one */
	if (hosts > 1 || (r->minor >= 1 && hosts == 0))
		return 400;
	if (r->minor == 0) /* HTTP/1.0's keep-alive is not offered */
		r->close = true;
	return 200;
}

const char *tls_http_reason(int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}

/* Why, for the body of an error answer: a person reading curl's output
 * should know what to change. */
static const char *why(int code)
{
	switch (code) {
	case 400:
		return "malformed request (HTTP/1.1 needs a Host header)";
	case 404:
		return "tlsd serves " TLS_HTTP_PATH " only";
	case 405:
		return "only GET and HEAD";
	case 408:
		return "the request did not arrive within 5 s";
	case 414:
		return "request line longer than 8 KiB";
	case 431:
		return "request head longer than 8 KiB";
	case 500:
		return "tlsd could not build the metrics (see its log)";
	case 503:
		return "too many connections; try again";
	case 505:
		return "HTTP/1.0 and HTTP/1.1 only";
	}
	return "error";
}

int tls_http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *err,
			  size_t errlen)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char a[INET6_ADDRSTRLEN];
	const char *colon, *addr = s;
	size_t alen;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return tls_errf(err, errlen,
					"'%s' is not [ADDR]:PORT (example: \"[::1]:9464\")", s);
		addr = s + 1;
		alen = (size_t)(close - addr);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return tls_errf(err, errlen,
					"'%s' is not ADDR:PORT or [ADDR6]:PORT (example: "
					"\"127.0.0.1:9464\")",
					s);
		alen = (size_t)(colon - s);
	}
	if (alen == 0 || alen >= sizeof(a))
		return tls_errf(err, errlen, "'%s': no address before the port", s);
	memcpy(a, addr, alen);
	a[alen] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || colon[1] == '+' || colon[1] == '-' || !port ||
	    port > 65535)
		return tls_errf(err, errlen, "'%s': the port must be a number 1..65535", s);
	if (addr != s && inet_pton(AF_INET6, a, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*s6);
		return 0;
	}
	if (addr == s && inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*s4);
		return 0;
	}
	return tls_errf(err, errlen,
			"'%s': '%s' is not an IPv%c address (a literal address: no host names)", s,
			a, addr == s ? '4' : '6');
}

bool tls_http_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && s6->sin6_addr.s6_addr[12] == 127;
}

/* ---------------------------------------------------------------------- */
/* The server                                                              */

/* Per wakeup: a few accepts and events, so that a flood of connections
 * cannot hold the daemon's loop. */
#define ACCEPTS_PER_DISPATCH 16
#define EVENTS_PER_DISPATCH  32
/* What a client may still send after its answer before it is closed. */
#define LINGER_MAX (64 * 1024)

static const unsigned int codes[] = { 200, 400, 404, 405, 408, 414, 431, 500, 503, 505 };
#define NCODES (sizeof(codes) / sizeof(codes[0]))

enum cstate {
	C_READ,	  /* the request head is coming */
	C_WRITE,  /* the answer is going out */
	C_LINGER, /* answered: what the client still sends is dropped */
};

struct client {
	int fd;
	enum cstate st;
	char *in; /* TLS_HTTP_MAX_HEAD bytes */
	size_t in_len;
	char *out; /* the answer's head */
	size_t out_len;
	struct tls_http_body body; /* and its body, as the handler made it (not copied) */
	/* what goes out: the head, then the body's pieces */
	struct tls_piece piece[1 + TLS_HTTP_MAX_PIECES];
	size_t npieces;
	size_t out_off; /* sent of the pieces */
	size_t lingered;
	size_t head_len;      /* the request being answered: its head's bytes in in */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC: past it, 408 or closed */
	uint32_t events;      /* what epoll watches now */
	bool extra;	      /* one over the bound, being told 503 */
	bool keep;	      /* the connection goes on after this answer */
	bool pending;	      /* in holds input not yet parsed (pipelined) */
	bool dead;	      /* dropped: freed at the end of the dispatch */
	unsigned int served;  /* answers sent on this connection */
	char peer[INET6_ADDRSTRLEN + 8];
	struct client *prev, *next;
};

struct tls_http {
	int lfd, epfd, tfd;
	char addr[64];
	tls_http_handler handler;
	void *ctx;
	struct client *clients;
	/* dropped in this dispatch, freed at its end: an event fetched
	 * with them may still come (a client evicted for a new one) */
	struct client *dead;
	unsigned int nclients, nextra;
	uint64_t armed_ns; /* the timer's expiry; 0: disarmed */
	uint64_t counts[NCODES];
};

int tls_http_fd(const struct tls_http *h)
{
	return h->epfd;
}

const char *tls_http_addr(const struct tls_http *h)
{
	return h->addr;
}

size_t tls_http_counts(const struct tls_http *h, unsigned int *c, uint64_t *n, size_t max)
{
	for (size_t i = 0; i < NCODES && i < max; i++) {
		c[i] = codes[i];
		n[i] = h->counts[i];
	}
	return NCODES;
}

static void count(struct tls_http *h, int code)
{
	for (size_t i = 0; i < NCODES; i++)
		if (codes[i] == (unsigned int)code)
			h->counts[i]++;
}

static void body_free(struct tls_http_body *b)
{
	free(b->text);
	if (b->release)
		b->release(b->ref);
	*b = (struct tls_http_body){ 0 };
}

static void drop(struct tls_http *h, struct client *cl)
{
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		h->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	if (cl->extra)
		h->nextra--;
	else
		h->nclients--;
	free(cl->in);
	free(cl->out);
	body_free(&cl->body);
	cl->in = cl->out = NULL;
	cl->dead = true;
	cl->next = h->dead;
	h->dead = cl;
}

static void bury(struct tls_http *h)
{
	while (h->dead) {
		struct client *cl = h->dead;

		h->dead = cl->next;
		free(cl);
	}
}

static bool watch(struct tls_http *h, struct client *cl, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = cl };

	if (cl->events == events)
		return true;
	if (epoll_ctl(h->epfd, cl->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, cl->fd, &ev))
		return false;
	cl->events = events;
	return true;
}

/* The answer to code (with req for a 200): head and body in cl->out. */
static int compose(struct tls_http *h, struct client *cl, int code, const struct tls_http_req *r)
{
	const char *ctype = "text/plain; charset=utf-8";
	struct tls_http_body *b = &cl->body;
	char head[512];
	size_t blen = 0, hlen, i;
	bool send_body = r->method != TLS_HTTP_HEAD; /* HEAD: the head alone */

	body_free(b);
	cl->keep = code == 200 && !r->close && !cl->extra;
	cl->head_len = r->head_len;
	if (code == 200 && h->handler(h->ctx, r->openmetrics, b, &ctype)) {
		body_free(b);
		code = 500;
		ctype = "text/plain; charset=utf-8";
		cl->keep = false;
	}
	if (code != 200) {
		int n = asprintf(&b->text, "%d %s: %s\n", code, tls_http_reason(code), why(code));

		if (n < 0) {
			b->text = NULL;
			n = 0;
		}
		b->len = (size_t)n;
	}
	if (!b->npieces && b->len)
		b->piece[b->npieces++] = (struct tls_piece){ .buf = b->text, .len = b->len };
	for (i = 0; i < b->npieces; i++)
		blen += b->piece[i].len;
	hlen = (size_t)snprintf(head, sizeof(head),
				"HTTP/1.1 %d %s\r\n"
				"Content-Type: %s\r\n"
				"Content-Length: %zu\r\n"
				"Cache-Control: no-store\r\n"
				"%s%s\r\n",
				code, tls_http_reason(code), ctype, blen,
				code == 405 ? "Allow: GET, HEAD\r\n" :
				code == 503 ? "Retry-After: 1\r\n" :
					      "",
				cl->keep ? "" : "Connection: close\r\n");
	free(cl->out);
	cl->out = malloc(hlen);
	if (!cl->out) {
		body_free(b);
		return -ENOMEM;
	}
	memcpy(cl->out, head, hlen);
	cl->out_len = hlen;
	cl->out_off = 0;
	cl->piece[0] = (struct tls_piece){ .buf = cl->out, .len = hlen };
	cl->npieces = 1;
	/* the body goes out from the handler's memory, without a copy: a
	 * scrape of 1024 flows is half a megabyte, 100 times a second under
	 * load */
	if (send_body) {
		memcpy(&cl->piece[1], b->piece, b->npieces * sizeof(b->piece[0]));
		cl->npieces += b->npieces;
	} else {
		body_free(b);
	}
	count(h, code);
	if (code != 200)
		pr_debug("metrics: %s: %d %s\n", cl->peer, code, tls_http_reason(code));
	return 0;
}

/* Send what is queued, head then body: 1 when all is out, 0 to wait, -1
 * if the client is gone. */
static int flush_out(struct client *cl)
{
	return tls_send_pieces(cl->fd, cl->piece, cl->npieces, &cl->out_off);
}

/* The answer is out: no more from us; the client's last bytes are read
 * and dropped for a while. false: close now. */
static bool linger(struct tls_http *h, struct client *cl)
{
	free(cl->out);
	body_free(&cl->body);
	free(cl->in);
	cl->out = cl->in = NULL;
	cl->out_len = cl->npieces = cl->out_off = cl->in_len = 0;
	if (shutdown(cl->fd, SHUT_WR))
		return false;
	cl->st = C_LINGER;
	cl->deadline_ns = tls_now_ns() + TLS_HTTP_LINGER_NS;
	return watch(h, cl, EPOLLIN);
}

/* Empty lines between requests are ignored (RFC 9112, 2.2): on a kept
 * connection a client's stray CR LF after its request is no request. */
static void skip_empty_lines(struct client *cl)
{
	size_t k = 0;

	while (k < cl->in_len && (cl->in[k] == '\r' || cl->in[k] == '\n'))
		k++;
	memmove(cl->in, cl->in + k, cl->in_len - k);
	cl->in_len -= k;
}

/*
 * A kept connection's answer is out: wait for the next request, which may
 * be in already (pipelined: then it is parsed at the end of this dispatch
 * by expire(), its deadline being now, so that it does not depend on the
 * socket being readable or writable again). false: close now.
 */
static bool next_request(struct tls_http *h, struct client *cl)
{
	size_t rest = cl->in_len - cl->head_len;
	uint64_t now = tls_now_ns();

	free(cl->out);
	body_free(&cl->body);
	cl->out = NULL;
	cl->out_len = cl->npieces = cl->out_off = 0;
	memmove(cl->in, cl->in + cl->head_len, rest);
	cl->in_len = rest;
	cl->head_len = 0;
	cl->served++;
	cl->st = C_READ;
	skip_empty_lines(cl);
	cl->pending = cl->in_len > 0;
	/* pending: due at once (expire() parses it; the timer wakes the loop
	 * whatever the socket's state) */
	cl->deadline_ns = cl->pending ? now : now + TLS_HTTP_IDLE_NS;
	return watch(h, cl, EPOLLIN);
}

/* The answer is out: the next request, or the end. */
static bool answered(struct tls_http *h, struct client *cl)
{
	return cl->keep ? next_request(h, cl) : linger(h, cl);
}

/* Answer code and start writing; false: close now. */
static bool answer(struct tls_http *h, struct client *cl, int code, const struct tls_http_req *r)
{
	struct tls_http_req none = { 0 };
	int sent;

	if (compose(h, cl, code, r ? r : &none))
		return false;
	cl->st = C_WRITE;
	cl->deadline_ns = tls_now_ns() + TLS_HTTP_RESPONSE_NS;
	sent = flush_out(cl);
	if (sent < 0)
		return false;
	if (sent)
		return answered(h, cl);
	return watch(h, cl, EPOLLOUT);
}

/* One read of the request head; false: close now. */
static bool read_head(struct tls_http *h, struct client *cl)
{
	struct tls_http_req r;
	ssize_t n = 0;
	int code;

	if (cl->pending) { /* what came after the last request: no read */
		cl->pending = false;
		cl->deadline_ns = tls_now_ns() + TLS_HTTP_REQUEST_NS;
	} else {
		do
			n = recv(cl->fd, cl->in + cl->in_len, TLS_HTTP_MAX_HEAD - cl->in_len,
				 MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		if (n == 0) /* the client ended: a head cut short is a bad request */
			return cl->in_len ? answer(h, cl, 400, NULL) : false;
		/* a kept connection's next head is due within the same time of
		 * its first byte as a new connection's */
		if (!cl->in_len && cl->served)
			cl->deadline_ns = tls_now_ns() + TLS_HTTP_REQUEST_NS;
		cl->in_len += (size_t)n;
		if (cl->served) {
			skip_empty_lines(cl);
			if (!cl->in_len) { /* idle again */
				cl->deadline_ns = tls_now_ns() + TLS_HTTP_IDLE_NS;
				return true;
			}
		}
	}
	code = tls_http_parse(cl->in, cl->in_len, &r);
	return code == TLS_HTTP_INCOMPLETE || answer(h, cl, code, &r);
}

/* Read and drop; false: close now (EOF, error, or it sent too much). */
static bool read_linger(struct client *cl)
{
	char buf[4096];
	ssize_t n;

	do
		n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK;
	cl->lingered += (size_t)n;
	return n > 0 && cl->lingered <= LINGER_MAX;
}

static bool service(struct tls_http *h, struct client *cl, uint32_t events)
{
	int sent;

	switch (cl->st) {
	case C_READ:
		if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			return read_head(h, cl);
		return true;
	case C_WRITE:
		if (events & (EPOLLHUP | EPOLLERR))
			return false;
		sent = flush_out(cl);
		return sent < 0 ? false : sent ? answered(h, cl) : true;
	case C_LINGER:
		return read_linger(cl);
	}
	return false;
}

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	uint16_t port = 0;

	if (!getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		} else if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		}
	}
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
}

static bool idle(const struct client *cl)
{
	return cl->st == C_READ && cl->served && !cl->in_len && !cl->pending;
}

/* The kept connection idle the longest (its deadline the earliest), or
 * NULL: a new client takes its slot rather than be told 503. One whose
 * next request is in already is not idle (closing it with its request
 * unread would reset the connection). */
static struct client *oldest_idle(struct tls_http *h)
{
	struct client *cl, *o = NULL;
	char c;

	for (cl = h->clients; cl; cl = cl->next)
		if (!cl->extra && idle(cl) && (!o || cl->deadline_ns < o->deadline_ns) &&
		    recv(cl->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
			o = cl;
	return o;
}

/*
 * One over the bound (when no kept connection is idle to make room) is
 * told 503 (and its request read and dropped while the answer goes, as any
 * client's: closing with its request unread would reset the connection and
 * lose the answer). As many again may be told so at once, with no request
 * buffer; past that, a flood, a connection is closed at once.
 */
static bool accept_one(struct tls_http *h)
{
	struct client *cl;
	bool extra;
	int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return false;
	if (h->nclients >= TLS_HTTP_MAX_CLIENTS && (cl = oldest_idle(h)))
		drop(h, cl);
	extra = h->nclients >= TLS_HTTP_MAX_CLIENTS;
	cl = extra && h->nextra >= TLS_HTTP_MAX_CLIENTS ? NULL : calloc(1, sizeof(*cl));
	if (cl && !extra)
		cl->in = malloc(TLS_HTTP_MAX_HEAD);
	if (!cl || (!extra && !cl->in)) {
		free(cl);
		close(fd);
		return true;
	}
	cl->fd = fd;
	cl->st = C_READ;
	cl->extra = extra;
	cl->deadline_ns = tls_now_ns() + TLS_HTTP_REQUEST_NS;
	peer_name(fd, cl->peer, sizeof(cl->peer));
	cl->next = h->clients;
	if (h->clients)
		h->clients->prev = cl;
	h->clients = cl;
	if (extra)
		h->nextra++;
	else
		h->nclients++;
	if (!watch(h, cl, EPOLLIN) || (extra && !answer(h, cl, 503, NULL)))
		drop(h, cl);
	return true;
}

/* Deadlines: a head not in by its deadline is answered 408; an answer not
 * taken, or a linger over, is closed. */
static void expire(struct tls_http *h, uint64_t now)
{
	struct client *cl, *next;

	for (cl = h->clients; cl; cl = next) {
		next = cl->next;
		if (cl->deadline_ns > now)
			continue;
		if (cl->st == C_READ && cl->pending) { /* a pipelined request */
			if (!read_head(h, cl))
				drop(h, cl);
			continue;
		}
		if (cl->st == C_READ && !idle(cl) && answer(h, cl, 408, NULL))
			continue;
		if (cl->st == C_WRITE)
			pr_debug("metrics: %s did not take its answer within %llu s\n", cl->peer,
				 TLS_HTTP_RESPONSE_NS / 1000000000ULL);
		drop(h, cl);
	}
}

/*
 * The timer for the earliest deadline, disarmed while there is none. A
 * timer armed earlier than needed is left as it is (a deadline moved
 * later, as a kept connection's at each request): it fires, nothing is
 * due, and it is set again then, rather than at every request.
 */
static void rearm(struct tls_http *h)
{
	struct itimerspec its = { 0 };
	uint64_t first = 0;
	struct client *cl;

	for (cl = h->clients; cl; cl = cl->next)
		if (!first || cl->deadline_ns < first)
			first = cl->deadline_ns;
	if (first == h->armed_ns || (first && h->armed_ns && h->armed_ns < first))
		return;
	its.it_value.tv_sec = (time_t)(first / 1000000000ULL);
	its.it_value.tv_nsec = (long)(first % 1000000000ULL);
	if (!timerfd_settime(h->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		h->armed_ns = first;
}

void tls_http_dispatch(struct tls_http *h)
{
	struct epoll_event ev[EVENTS_PER_DISPATCH];
	uint64_t x;
	int n, i, k;

	n = epoll_wait(h->epfd, ev, EVENTS_PER_DISPATCH, 0);
	for (i = 0; i < n; i++) {
		struct client *cl = ev[i].data.ptr;

		if (!cl) { /* the listener */
			for (k = 0; k < ACCEPTS_PER_DISPATCH && accept_one(h); k++)
				;
			continue;
		}
		if (ev[i].data.ptr == &h->tfd) {
			if (read(h->tfd, &x, sizeof(x)) < 0)
				continue;
			h->armed_ns = 0; /* a one-shot timer */
			continue;
		}
		if (cl->dead)
			continue;
		if (!service(h, cl, ev[i].events))
			drop(h, cl);
	}
	expire(h, tls_now_ns());
	rearm(h);
	bury(h);
}

int tls_http_open(const char *addr, tls_http_handler handler, void *ctx, struct tls_http **out)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct sockaddr_storage ss;
	struct tls_http *h;
	socklen_t sl;
	char err[256];
	int one = 1, e;

	if (tls_http_parse_listen(addr, &ss, &sl, err, sizeof(err))) {
		pr_warn("metrics_listen: %s\n", err);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->addr, sizeof(h->addr), "%s", addr);
	h->handler = handler;
	h->ctx = ctx;
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	e = h->lfd < 0 || h->epfd < 0 || h->tfd < 0 ? errno : 0;
	/* a restart must not wait for the last run's connections' TIME_WAIT */
	if (!e && setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		e = errno;
	if (!e && bind(h->lfd, (struct sockaddr *)&ss, sl))
		e = errno;
	if (!e && listen(h->lfd, TLS_HTTP_MAX_CLIENTS))
		e = errno;
	if (!e && epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->lfd, &ev))
		e = errno;
	ev.data.ptr = &h->tfd;
	if (!e && epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->tfd, &ev))
		e = errno;
	if (e) {
		pr_warn("metrics_listen %s: cannot listen: %s\n", addr, strerror(e));
		tls_http_close(h);
		return -e;
	}
	if (tls_http_is_loopback(&ss))
		pr_info("metrics on http://%s%s\n", addr, TLS_HTTP_PATH);
	else
		pr_warn("metrics on http://%s%s: not a loopback address, so other hosts may "
			"read the job names and worker addresses\n",
			addr, TLS_HTTP_PATH);
	*out = h;
	return 0;
}

void tls_http_close(struct tls_http *h)
{
	if (!h)
		return;
	while (h->clients)
		drop(h, h->clients);
	bury(h);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->tfd >= 0)
		close(h->tfd);
	if (h->epfd >= 0)
		close(h->epfd);
	free(h);
}
