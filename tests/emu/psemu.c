// SPDX-License-Identifier: GPL-2.0-only
/*
 * psemu - emulates bulk-synchronous parameter-server training over real TCP,
 * for tlsd's testbed, demo and benchmarks.
 *
 *   psemu ps      listens; each iteration it waits for a gradient (S bytes)
 *                 from each of its W workers, then sends the updated model
 *                 (S bytes) to every worker over that worker's connection
 *   psemu worker  connects; receives the model, "computes" (sleeps) for C ms
 *                 with optional jitter, sends its gradient, and records how
 *                 long it waited at the barrier: from sending its gradient
 *                 to holding the whole next model
 *
 * Both write their results as JSON (json-c). The PS decides S and the number
 * of iterations and tells its workers in the first model's header, so the two
 * sides cannot disagree. Its model-update traffic leaves from the sockets it
 * accepted, i.e. from its listening port, which is what tlsd's static jobs
 * match; it also carries the ps-lite convention (DMLC_ROLE=server,
 * DMLC_PS_ROOT_PORT) and accepts TensorFlow's --job_name=ps, which tlsd's
 * discovery rules recognise.
 *
 * The PS is one poll loop over its W connections so that every broadcast goes
 * out on all of them at once, as a real PS's does: sending to one worker after
 * another would serialise the flows and hide exactly the interleaving that tlsd
 * is about. A worker has one connection and simply blocks.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu_addr.h"

#include <json-c/json.h>

#define PSEMU_MAGIC	 0x5053454dU /* "PSEM" */
#define PSEMU_VERSION	 1
#define MSG_MODEL	 1
#define MSG_GRADIENT	 2
#define HDR_LEN		 24
#define CHUNK		 (256 * 1024)
#define MAX_SIZE	 (1ULL << 30)
#define MAX_WORKERS	 1024
#define MAX_ITERS	 1000000
#define DEF_PORT	 9000
#define DEF_WORKERS	 4
#define DEF_SIZE	 1000000
#define DEF_ITERS	 20
#define DEF_COMPUTE_MS	 100.0
#define DEF_TIMEOUT_S	 60.0
#define CONNECT_RETRY_MS 50

static const char usage_text[] =
	"Usage: psemu ps [OPTIONS]\n"
	"       psemu worker -c ADDR:PORT [OPTIONS]\n"
	"Emulates bulk-synchronous parameter-server training over TCP.\n"
	"\n"
	"ps: listen, send the model (S bytes) to each of W workers, then per iteration\n"
	"wait for every worker's gradient (S bytes) and send the updated model to all.\n"
	"  -p, --port PORT        listening port (default $DMLC_PS_ROOT_PORT, else 9000)\n"
	"  -b, --bind ADDR        numeric address to listen on (default 0.0.0.0)\n"
	"  -w, --workers W        workers to wait for (default $DMLC_NUM_WORKER, else 4)\n"
	"  -s, --size S           model and gradient size in bytes; suffixes k, M, G\n"
	"                         (powers of 1000) and Ki, Mi, Gi (default 1M)\n"
	"  -n, --iterations N     iterations (default 20); the PS sends N+1 models\n"
	"      --start-at T       once all workers are in, wait until the wall clock reads\n"
	"                         T (seconds since the epoch) before the first model, so\n"
	"                         that several jobs can start together\n"
	"\n"
	"worker: connect, then per iteration receive the model, compute, send the gradient.\n"
	"  -c, --connect ADDR:PORT  the PS (default $DMLC_PS_ROOT_URI:$DMLC_PS_ROOT_PORT);\n"
	"                         retried until --timeout while nobody listens\n"
	"  -C, --compute MS       compute time per iteration in ms (default 100)\n"
	"  -j, --jitter MS        standard deviation of the compute time (normal, cut at 0;\n"
	"                         default 0)\n"
	"      --seed N           seed for the jitter (default: from the pid and clock)\n"
	"\n"
	"both:\n"
	"  -o, --output FILE      JSON results to FILE, written whole at the end (default -,\n"
	"                         standard output)\n"
	"  -N, --name NAME        a label copied into the results\n"
	"  -t, --timeout SECS     give up when nothing moves for SECS (default 60)\n"
	"      --cc NAME          TCP congestion control for the job's connections (e.g.\n"
	"                         cubic; default: the system's)\n"
	"      --job_name=ps|worker  TensorFlow's role flag; must match the role\n"
	"  -q, --quiet            no progress messages on standard error\n"
	"  -h, --help             this text\n"
	"  -V, --version          print the version (alone, in place of the role)\n"
	"\n"
	"ADDR is numeric: 198.18.0.1, [fd00::1]. Exit status: 0 done, 1 the job failed\n"
	"(a peer went away, a timeout, a protocol error; the results say which),\n"
	"2 bad usage.\n";

struct opts {
	int role; /* 0 ps, 1 worker */
	const char *name;
	const char *output;
	double timeout_s;
	const char *cc; /* NULL: the system's default */
	bool quiet;
	/* ps */
	const char *bind;
	unsigned int port;
	unsigned int workers;
	uint64_t size;
	unsigned int iters;
	double start_at; /* 0: at once */
	/* worker */
	const char *connect;
	double compute_ms, jitter_ms;
	long seed;
	bool seeded;
};

static struct opts o;
static char *sendbuf; /* what goes out: a fixed pattern, CHUNK bytes */
static char recvbuf[CHUNK];

static void __attribute__((noreturn, format(printf, 1, 2))) die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("psemu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'psemu --help'.\n", stderr);
	exit(2);
}

static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	if (o.quiet)
		return;
	fprintf(stderr, "psemu %s%s%s: ", o.role ? "worker" : "ps", o.name ? " " : "",
		o.name ? o.name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- parsing ---- */

static unsigned long long parse_uint(const char *opt, const char *s, unsigned long long min,
				     unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || v < min || v > max)
		die_usage("bad value '%s' for %s (want a whole number from %llu to %llu)", s, opt,
			  min, max);
	return v;
}

static double parse_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v = strtod(s, &end);

	/* written so that NaN fails too */
	if (end == s || *end || !(v >= min && v <= max))
		die_usage("bad value '%s' for %s (want a number from %g to %g)", s, opt, min, max);
	return v;
}

static uint64_t parse_size(const char *s)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} sfx[] = { { "", 1 },		 { "k", 1000 },	 { "K", 1000 },	    { "M", 1000000 },
		    { "G", 1000000000 }, { "Ki", 1024 }, { "Mi", 1 << 20 }, { "Gi", 1ULL << 30 } };
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] >= '0' && s[0] <= '9' && !errno) {
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			if (strcmp(end, sfx[i].sfx))
				continue;
			if (v == 0 || v > MAX_SIZE / sfx[i].mul)
				break;
			return v * sfx[i].mul;
		}
	}
	die_usage("bad size '%s' for --size (want 1 byte to 1Gi, e.g. 1250000, 1250k, 4Mi)", s);
}

/* A numeric address, with "[v6]" brackets optional for a bare host. */
static bool parse_host(const char *host, unsigned int port, struct addr *a)
{
	struct sockaddr_in6 *s6 = (void *)&a->ss;
	struct sockaddr_in *s4 = (void *)&a->ss;
	char ip[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(host);

	memset(a, 0, sizeof(*a));
	if (n >= sizeof(ip))
		return false;
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		memcpy(ip, host + 1, n - 2);
		ip[n - 2] = '\0';
	} else {
		memcpy(ip, host, n + 1);
	}
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		a->len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		a->len = sizeof(*s6);
	} else {
		return false;
	}
	fmt_addr(&a->ss, a->str, sizeof(a->str));
	return true;
}

/* "ADDR:PORT" or "[V6]:PORT" */
static void parse_hostport(const char *opt, const char *s, struct addr *a)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	char *end;

	if (!colon || (size_t)(colon - s) >= sizeof(host) ||
	    (s[0] != '[' && memchr(s, ':', colon - s)))
		die_usage("bad address '%s' for %s (want IPV4:PORT or [IPV6]:PORT)", s, opt);
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || port < 1 || port > 65535)
		die_usage("bad port in '%s' for %s (want 1-65535)", s, opt);
	if (!parse_host(host, port, a))
		die_usage("bad address '%s' for %s (numeric IPv4 or [IPv6] only)", host, opt);
}

/* ---- the wire: a fixed header, then len bytes ---- */

struct hdr {
	uint32_t magic;
	uint16_t version, type;
	uint32_t iter, iters;
	uint64_t len;
};

static void hdr_pack(const struct hdr *h, unsigned char *b)
{
	uint32_t w[6] = { htonl(h->magic),
			  htonl((uint32_t)h->version << 16 | h->type),
			  htonl(h->iter),
			  htonl(h->iters),
			  htonl((uint32_t)(h->len >> 32)),
			  htonl((uint32_t)h->len) };

	memcpy(b, w, HDR_LEN);
}

static void hdr_unpack(const unsigned char *b, struct hdr *h)
{
	uint32_t w[6];

	memcpy(w, b, HDR_LEN);
	h->magic = ntohl(w[0]);
	h->version = ntohl(w[1]) >> 16;
	h->type = ntohl(w[1]) & 0xffff;
	h->iter = ntohl(w[2]);
	h->iters = ntohl(w[3]);
	h->len = (uint64_t)ntohl(w[4]) << 32 | ntohl(w[5]);
}

/* An error message for a header that is not the one expected, or "" if it is. */
static const char *hdr_check(const struct hdr *h, unsigned int type, unsigned int iter,
			     uint64_t len, char *buf, size_t blen)
{
	if (h->magic != PSEMU_MAGIC)
		snprintf(buf, blen, "the peer does not speak psemu (bad magic 0x%08x)", h->magic);
	else if (h->version != PSEMU_VERSION)
		snprintf(buf, blen, "the peer speaks psemu protocol %u, we speak %u", h->version,
			 PSEMU_VERSION);
	else if (h->type != type)
		snprintf(buf, blen, "expected a %s, got message type %u",
			 type == MSG_MODEL ? "model" : "gradient", h->type);
	else if (h->iter != iter)
		snprintf(buf, blen, "expected iteration %u, got %u", iter, h->iter);
	else if (len && h->len != len)
		snprintf(buf, blen, "expected %" PRIu64 " bytes, got a length of %" PRIu64, len,
			 h->len);
	else
		buf[0] = '\0';
	return buf;
}

/* ---- results ---- */

static json_object *jdbl(double v)
{
	return json_object_new_double(v);
}

static json_object *jarr(const double *v, size_t n)
{
	json_object *a = json_object_new_array_ext(n);

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, jdbl(v[i]));
	return a;
}

/* Whole or not at all: a reader polling for the file never sees half of it. */
static int write_json(json_object *j)
{
	const char *txt = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	char tmp[4096];
	FILE *f;

	if (!strcmp(o.output, "-")) {
		printf("%s\n", txt);
		return fflush(stdout) ? -1 : 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o.output) >= (int)sizeof(tmp)) {
		fprintf(stderr, "psemu: output path too long: %s\n", o.output);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", txt) < 0 || fclose(f) || rename(tmp, o.output)) {
		fprintf(stderr, "psemu: cannot write %s: %s\n", o.output, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static json_object *common_json(const char *role)
{
	json_object *j = json_object_new_object();
	struct rusage ru;

	json_object_object_add(j, "role", json_object_new_string(role));
	if (o.name)
		json_object_object_add(j, "name", json_object_new_string(o.name));
	json_object_object_add(j, "pid", json_object_new_int(getpid()));
	if (o.cc)
		json_object_object_add(j, "tcp_congestion_control", json_object_new_string(o.cc));
	/* so that a benchmark can tell whether the emulator itself was short of CPU */
	if (!getrusage(RUSAGE_SELF, &ru))
		json_object_object_add(j, "cpu_s",
				       jdbl(ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
					    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6));
	return j;
}

/* ---- the PS ---- */

static void sleep_ms(double ms);

struct conn {
	int fd;
	char peer[ADDR_LEN];
	/* sending: the header, then payload bytes */
	unsigned char ohdr[HDR_LEN];
	uint64_t out_len, out_off; /* out_len 0: nothing to send */
	/* receiving: the header, then payload bytes */
	unsigned char ihdr[HDR_LEN];
	uint64_t in_off;    /* bytes of the current message so far, header included */
	unsigned int grads; /* gradients received */
	bool eof;
	uint32_t retrans; /* segments TCP retransmitted, read when the worker closes */
};

struct ps {
	struct conn *c;
	unsigned int n;
	unsigned int iter; /* the model being sent is iteration iter */
	unsigned int have; /* gradients of iteration iter received */
	uint64_t sent, rcvd;
	char err[256];
};

static int listen_on(const struct addr *a)
{
	int one = 1, fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (const struct sockaddr *)&a->ss, a->len) || listen(fd, SOMAXCONN)) {
		fprintf(stderr, "psemu: cannot listen on %s: %s\n", a->str, strerror(errno));
		exit(1);
	}
	return fd;
}

/* 0, or -1 with a message in err */
static int conn_setup(int fd, char *err, size_t elen)
{
	int one = 1;

	/* frameworks send their tensors with Nagle off; without it the last partial
	 * segment of every message would wait for an ACK */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* per socket, so that a benchmark does not depend on the machine's default
	 * (an algorithm outside tcp_allowed_congestion_control needs CAP_NET_ADMIN) */
	if (o.cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.cc, strlen(o.cc))) {
		snprintf(err, elen, "cannot use TCP congestion control '%s': %s", o.cc,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static void start_broadcast(struct ps *p)
{
	struct hdr h = { .magic = PSEMU_MAGIC,
			 .version = PSEMU_VERSION,
			 .type = MSG_MODEL,
			 .iter = p->iter,
			 .iters = o.iters,
			 .len = o.size };

	for (unsigned int i = 0; i < p->n; i++) {
		hdr_pack(&h, p->c[i].ohdr);
		p->c[i].out_len = HDR_LEN + o.size;
		p->c[i].out_off = 0;
	}
	p->have = 0;
}

/* Send what the socket takes now; -1 with p->err on a fatal error. */
static int ps_send(struct ps *p, struct conn *c)
{
	while (c->out_off < c->out_len) {
		const void *buf;
		size_t len;
		ssize_t n;

		if (c->out_off < HDR_LEN) {
			buf = c->ohdr + c->out_off;
			len = HDR_LEN - c->out_off;
		} else {
			uint64_t left = c->out_len - c->out_off;

			buf = sendbuf;
			len = left < CHUNK ? left : CHUNK;
		}
		n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0) {
			snprintf(p->err, sizeof(p->err), "sending model %u to worker %s: %s",
				 p->iter, c->peer, strerror(errno));
			return -1;
		}
		c->out_off += n;
		p->sent += n;
	}
	c->out_len = c->out_off = 0;
	return 0;
}

/* Read what has arrived; -1 with p->err on a fatal error. */
static int ps_recv(struct ps *p, struct conn *c)
{
	char why[160];
	struct hdr h;
	ssize_t n;

	for (;;) {
		uint64_t want =
			c->in_off < HDR_LEN ? HDR_LEN - c->in_off : HDR_LEN + o.size - c->in_off;
		void *buf = c->in_off < HDR_LEN ? (void *)(c->ihdr + c->in_off) : recvbuf;

		n = recv(c->fd, buf, want < CHUNK ? want : CHUNK, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0) {
			snprintf(p->err, sizeof(p->err), "receiving from worker %s: %s", c->peer,
				 strerror(errno));
			return -1;
		}
		if (n == 0) {
			struct tcp_info ti;
			socklen_t tl = sizeof(ti);

			/* a worker closes once it holds the final model: only then is it done */
			if (p->iter < o.iters || c->in_off || c->out_len) {
				snprintf(p->err, sizeof(p->err),
					 "worker %s closed the connection in iteration %u", c->peer,
					 p->iter);
				return -1;
			}
			/* for the testbed's record: which connections TCP had to repair */
			if (!getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
				c->retrans = ti.tcpi_total_retrans;
			c->eof = true;
			return 0;
		}
		c->in_off += n;
		p->rcvd += n;
		if (c->in_off == HDR_LEN) {
			hdr_unpack(c->ihdr, &h);
			/* a worker may only send this iteration's gradient, and only once */
			if (*hdr_check(&h, MSG_GRADIENT, p->iter, o.size, why, sizeof(why)) ||
			    c->grads > p->iter || p->iter >= o.iters) {
				snprintf(p->err, sizeof(p->err), "worker %s: %s", c->peer,
					 *why ? why : "a gradient out of turn");
				return -1;
			}
		}
		if (c->in_off == HDR_LEN + o.size) {
			c->in_off = 0;
			c->grads++;
			p->have++;
		}
	}
}

static int run_ps(void)
{
	struct ps p = { 0 };
	struct pollfd *pfd;
	struct addr a;
	double t0 = 0, w0 = 0, tb = 0, last_move, *iter_s;
	int lfd, rc = 0;
	unsigned int i, closed;

	if (!parse_host(o.bind, o.port, &a))
		die_usage("bad address '%s' for --bind (numeric IPv4 or IPv6 only)", o.bind);
	lfd = listen_on(&a);
	/* on the listener too: what it accepts inherits it from the handshake on */
	conn_setup(lfd, p.err, sizeof(p.err));
	note("listening on %s for %u workers: %u iterations of %" PRIu64 " bytes", a.str, o.workers,
	     o.iters, o.size);

	p.c = calloc(o.workers, sizeof(*p.c));
	pfd = calloc(o.workers, sizeof(*pfd));
	iter_s = calloc(o.iters + 1, sizeof(double));
	if (!p.c || !pfd || !iter_s) {
		fprintf(stderr, "psemu: out of memory\n");
		return 1;
	}

	/* every worker first: a job starts when all of its workers are there */
	last_move = mono();
	while (p.n < o.workers && !p.err[0]) {
		struct pollfd lp = { .fd = lfd, .events = POLLIN };
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int r = poll(&lp, 1, 200), fd;

		if (r < 0 && errno != EINTR) {
			snprintf(p.err, sizeof(p.err), "poll: %s", strerror(errno));
			break;
		}
		if (r <= 0) {
			if (mono() - last_move > o.timeout_s) {
				snprintf(p.err, sizeof(p.err),
					 "only %u of %u workers connected within %g s", p.n,
					 o.workers, o.timeout_s);
				break;
			}
			continue;
		}
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (conn_setup(fd, p.err, sizeof(p.err))) {
			close(fd);
			break;
		}
		p.c[p.n].fd = fd;
		fmt_addr(&ss, p.c[p.n].peer, sizeof(p.c[p.n].peer));
		note("worker %u of %u: %s", p.n + 1, o.workers, p.c[p.n].peer);
		p.n++;
		last_move = mono();
	}
	close(lfd);

	if (!p.err[0] && o.start_at > 0) {
		double left = o.start_at - wall();

		if (left > o.timeout_s)
			snprintf(p.err, sizeof(p.err),
				 "--start-at is %.1f s away, more than the %g s timeout", left,
				 o.timeout_s);
		else if (left > 0)
			sleep_ms(left * 1000);
		else
			note("all workers in %.3f s after --start-at: starting late", -left);
	}
	if (!p.err[0]) {
		t0 = tb = last_move = mono();
		w0 = wall();
		start_broadcast(&p);
	}
	/* iteration 0 is the first model; iterations 1..N each follow a barrier */
	while (!p.err[0]) {
		bool moved = false;

		for (i = 0, closed = 0; i < p.n; i++) {
			pfd[i].fd = p.c[i].eof ? -1 : p.c[i].fd;
			pfd[i].events = POLLIN | (p.c[i].out_len ? POLLOUT : 0);
			closed += p.c[i].eof;
		}
		if (closed == p.n)
			break;
		if (poll(pfd, p.n, 200) < 0 && errno != EINTR) {
			snprintf(p.err, sizeof(p.err), "poll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < p.n && !p.err[0]; i++) {
			uint64_t s0 = p.sent, r0 = p.rcvd;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].revents & POLLOUT)
				ps_send(&p, &p.c[i]);
			if (!p.err[0] && pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				ps_recv(&p, &p.c[i]);
			moved |= p.sent != s0 || p.rcvd != r0 || p.c[i].eof;
		}
		if (p.err[0])
			break;
		if (moved)
			last_move = mono();
		else if (mono() - last_move > o.timeout_s)
			snprintf(p.err, sizeof(p.err), "nothing moved for %g s in iteration %u",
				 o.timeout_s, p.iter);
		if (p.iter < o.iters && p.have == p.n) {
			double t = mono();

			/* the barrier: the last gradient is in, the next model goes out */
			iter_s[p.iter++] = t - tb;
			tb = t;
			start_broadcast(&p);
		}
	}

	json_object *j = common_json("ps");
	double t1 = mono();

	json_object_object_add(j, "listen", json_object_new_string(a.str));
	json_object_object_add(j, "port", json_object_new_int(o.port));
	json_object_object_add(j, "workers", json_object_new_int(o.workers));
	json_object_object_add(j, "iterations", json_object_new_int(o.iters));
	json_object_object_add(j, "size_bytes", json_object_new_int64(o.size));
	json_object_object_add(j, "complete", json_object_new_boolean(!p.err[0]));
	if (p.err[0])
		json_object_object_add(j, "error", json_object_new_string(p.err));
	json_object_object_add(j, "start_unix", jdbl(w0));
	json_object_object_add(j, "end_unix", jdbl(w0 + (t0 ? t1 - t0 : 0)));
	json_object_object_add(j, "jct_s", jdbl(t0 ? t1 - t0 : 0));
	json_object_object_add(j, "bytes_sent", json_object_new_int64(p.sent));
	json_object_object_add(j, "bytes_received", json_object_new_int64(p.rcvd));
	/* time from one model broadcast starting to the next, i.e. an iteration as the
	 * PS sees it: its broadcast, the workers' compute, their gradients */
	json_object_object_add(j, "iteration_s", jarr(iter_s, p.iter < o.iters ? p.iter : o.iters));
	json_object *wk = json_object_new_array();

	json_object *rt = json_object_new_array();

	for (i = 0; i < p.n; i++) {
		json_object_array_add(wk, json_object_new_string(p.c[i].peer));
		json_object_array_add(rt, json_object_new_int64(p.c[i].retrans));
	}
	json_object_object_add(j, "worker_peers", wk);
	/* per worker, in worker_peers' order */
	json_object_object_add(j, "retrans_segs", rt);
	if (write_json(j))
		rc = 1;
	json_object_put(j);
	if (p.err[0]) {
		fprintf(stderr, "psemu ps%s%s: %s\n", o.name ? " " : "", o.name ? o.name : "",
			p.err);
		rc = 1;
	} else {
		note("done: %u iterations in %.3f s", o.iters, t1 - t0);
	}
	for (i = 0; i < p.n; i++)
		close(p.c[i].fd);
	free(p.c);
	free(pfd);
	free(iter_s);
	return rc;
}

/* ---- the worker ---- */

struct wk {
	int fd;
	char err[256];
	uint64_t sent, rcvd;
};

/* Connect, retrying while nobody listens yet (the PS may start after us). */
static int dial(const struct addr *a, char *err, size_t elen)
{
	double give_up = mono() + o.timeout_s;

	for (;;) {
		int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		double left = give_up - mono();
		struct timeval tv = { .tv_sec = (time_t)left,
				      .tv_usec = (long)(fmod(left, 1) * 1e6) };

		if (fd < 0) {
			snprintf(err, elen, "socket: %s", strerror(errno));
			return -1;
		}
		/* before the SYN: the handshake uses the congestion control too */
		if (conn_setup(fd, err, elen)) {
			close(fd);
			return -1;
		}
		/* a silent peer must not hold connect() beyond the timeout */
		if (left > 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(fd, (const struct sockaddr *)&a->ss, a->len))
			return fd;
		if (errno == EINPROGRESS)
			errno = ETIMEDOUT;
		close(fd);
		if ((errno != ECONNREFUSED && errno != ENETUNREACH && errno != EHOSTUNREACH &&
		     errno != ETIMEDOUT && errno != EINTR) ||
		    mono() >= give_up) {
			snprintf(err, elen, "cannot connect to %s: %s", a->str, strerror(errno));
			return -1;
		}
		poll(NULL, 0, CONNECT_RETRY_MS);
	}
}

/* Exactly len bytes (NULL buf: discard them); -1 with w->err. */
static int recv_all(struct wk *w, void *buf, uint64_t len, const char *what)
{
	while (len) {
		ssize_t n = recv(w->fd, buf ? buf : recvbuf, len < CHUNK ? len : CHUNK, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(w->err, sizeof(w->err), "receiving %s: %s", what,
				 n == 0		 ? "the PS closed the connection" :
				 errno == EAGAIN ? "timed out" :
						   strerror(errno));
			return -1;
		}
		w->rcvd += n;
		len -= n;
		if (buf)
			buf = (char *)buf + n;
	}
	return 0;
}

static int send_all(struct wk *w, const void *buf, uint64_t len, const char *what)
{
	while (len) {
		size_t chunk = len < CHUNK ? len : CHUNK;
		ssize_t n = send(w->fd, buf ? buf : sendbuf, chunk, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(w->err, sizeof(w->err), "sending %s: %s", what,
				 errno == EAGAIN ? "timed out" : strerror(errno));
			return -1;
		}
		w->sent += n;
		len -= n;
		if (buf)
			buf = (const char *)buf + n;
	}
	return 0;
}

/* The model of iteration iter; its header tells the first one the job's shape. */
static int recv_model(struct wk *w, unsigned int iter, unsigned int *iters, uint64_t *size)
{
	unsigned char b[HDR_LEN];
	char what[64], why[160];
	struct hdr h;

	snprintf(what, sizeof(what), "model %u", iter);
	if (recv_all(w, b, HDR_LEN, what))
		return -1;
	hdr_unpack(b, &h);
	if (*hdr_check(&h, MSG_MODEL, iter, iter ? *size : 0, why, sizeof(why))) {
		snprintf(w->err, sizeof(w->err), "model %u: %s", iter, why);
		return -1;
	}
	if (!iter) {
		if (!h.len || h.len > MAX_SIZE || !h.iters || h.iters > MAX_ITERS) {
			snprintf(w->err, sizeof(w->err),
				 "the PS announced %" PRIu64
				 " bytes and %u iterations: out of range",
				 h.len, h.iters);
			return -1;
		}
		*iters = h.iters;
		*size = h.len;
	}
	return recv_all(w, NULL, h.len, what);
}

/* Normal(compute, jitter), cut at 0: stragglers come from this tail. */
static double compute_time_ms(struct drand48_data *rng)
{
	double u1, u2, z, ms;

	if (o.jitter_ms <= 0)
		return o.compute_ms;
	drand48_r(rng, &u1);
	drand48_r(rng, &u2);
	z = sqrt(-2.0 * log(1.0 - u1)) * cos(2 * M_PI * u2);
	ms = o.compute_ms + o.jitter_ms * z;
	return ms < 0 ? 0 : ms;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(fmod(ms, 1000) * 1e6) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static int run_worker(void)
{
	struct wk w = { .fd = -1 };
	struct drand48_data rng;
	struct addr a;
	unsigned int iters = 0, i = 0;
	uint64_t size = 0;
	double t0, w0, t_first = 0, *wait_s = NULL, *comp_s = NULL;
	struct timeval tv = { .tv_sec = (time_t)o.timeout_s,
			      .tv_usec = (long)(fmod(o.timeout_s, 1) * 1e6) };
	int rc = 0;

	parse_hostport("--connect", o.connect, &a);
	srand48_r(o.seeded ? o.seed : (long)getpid() ^ (long)(wall() * 1e6), &rng);
	t0 = mono();
	w0 = wall();
	w.fd = dial(&a, w.err, sizeof(w.err));
	if (w.fd >= 0) {
		/* a PS that stops answering must not hang us forever */
		setsockopt(w.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(w.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		note("connected to %s", a.str);
		t0 = mono();
		w0 = wall();
	}
	if (w.fd >= 0 && !recv_model(&w, 0, &iters, &size)) {
		t_first = mono() - t0;
		wait_s = calloc(iters, sizeof(double));
		comp_s = calloc(iters, sizeof(double));
		if (!wait_s || !comp_s) {
			fprintf(stderr, "psemu: out of memory\n");
			return 1;
		}
		for (i = 0; i < iters; i++) {
			struct hdr h = { .magic = PSEMU_MAGIC,
					 .version = PSEMU_VERSION,
					 .type = MSG_GRADIENT,
					 .iter = i,
					 .iters = iters,
					 .len = size };
			unsigned char b[HDR_LEN];
			double c = compute_time_ms(&rng), ts;

			sleep_ms(c);
			comp_s[i] = c / 1000;
			hdr_pack(&h, b);
			if (send_all(&w, b, HDR_LEN, "a gradient header") ||
			    send_all(&w, NULL, size, "a gradient"))
				break;
			ts = mono();
			if (recv_model(&w, i + 1, &iters, &size))
				break;
			wait_s[i] = mono() - ts;
		}
	}
	double t1 = mono();

	if (w.fd >= 0)
		close(w.fd);

	json_object *j = common_json("worker");

	json_object_object_add(j, "ps", json_object_new_string(a.str));
	json_object_object_add(j, "iterations", json_object_new_int(iters));
	json_object_object_add(j, "size_bytes", json_object_new_int64(size));
	json_object_object_add(j, "compute_ms", jdbl(o.compute_ms));
	json_object_object_add(j, "jitter_ms", jdbl(o.jitter_ms));
	json_object_object_add(j, "complete", json_object_new_boolean(!w.err[0]));
	if (w.err[0])
		json_object_object_add(j, "error", json_object_new_string(w.err));
	json_object_object_add(j, "start_unix", jdbl(w0));
	json_object_object_add(j, "end_unix", jdbl(w0 + t1 - t0));
	json_object_object_add(j, "jct_s", jdbl(t1 - t0));
	json_object_object_add(j, "first_model_s", jdbl(t_first));
	json_object_object_add(j, "bytes_sent", json_object_new_int64(w.sent));
	json_object_object_add(j, "bytes_received", json_object_new_int64(w.rcvd));
	/* per iteration: from the gradient sent to the next model held whole */
	json_object_object_add(j, "barrier_wait_s", jarr(wait_s, i));
	json_object_object_add(j, "compute_s", jarr(comp_s, i));
	if (write_json(j))
		rc = 1;
	json_object_put(j);
	if (w.err[0]) {
		fprintf(stderr, "psemu worker%s%s: %s\n", o.name ? " " : "", o.name ? o.name : "",
			w.err);
		rc = 1;
	} else {
		note("done: %u iterations in %.3f s", iters, t1 - t0);
	}
	free(wait_s);
	free(comp_s);
	return rc;
}

/* ---- the command line ---- */

static void env_defaults(void)
{
	const char *port = getenv("DMLC_PS_ROOT_PORT"), *nw = getenv("DMLC_NUM_WORKER");
	const char *uri = getenv("DMLC_PS_ROOT_URI");
	static char conn[ADDR_LEN + 2];

	o.port = DEF_PORT;
	o.workers = DEF_WORKERS;
	if (port && *port)
		o.port = parse_uint("$DMLC_PS_ROOT_PORT", port, 1, 65535);
	if (nw && *nw)
		o.workers = parse_uint("$DMLC_NUM_WORKER", nw, 1, MAX_WORKERS);
	if (uri && *uri && port && *port) {
		snprintf(conn, sizeof(conn), strchr(uri, ':') ? "[%s]:%s" : "%s:%s", uri, port);
		o.connect = conn;
	}
}

static const char *long_name(const struct option *lo, int c)
{
	for (; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

int main(int argc, char **argv)
{
	enum { OPT_SEED = 256, OPT_JOB, OPT_START, OPT_CC };
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "start-at", required_argument, NULL, OPT_START },
		{ "connect", required_argument, NULL, 'c' },
		{ "compute", required_argument, NULL, 'C' },
		{ "jitter", required_argument, NULL, 'j' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'N' },
		{ "timeout", required_argument, NULL, 't' },
		{ "cc", required_argument, NULL, OPT_CC },
		{ "job_name", required_argument, NULL, OPT_JOB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *const ps_only = "pbwsn", *const wk_only = "cCj";
	static const char *const roles[] = { "ps", "worker" };
	int c, rc;

	if (argc < 2)
		die_usage("missing role (ps or worker)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("psemu %s (protocol %u)\n", TLS_VERSION, PSEMU_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "ps"))
		o.role = 0;
	else if (!strcmp(argv[1], "worker"))
		o.role = 1;
	else
		die_usage("unknown role '%s' (want ps or worker)", argv[1]);

	o.output = "-";
	o.bind = "0.0.0.0";
	o.size = DEF_SIZE;
	o.iters = DEF_ITERS;
	o.compute_ms = DEF_COMPUTE_MS;
	o.timeout_s = DEF_TIMEOUT_S;
	env_defaults();

	/* parse argv[1..], so that getopt takes the role for the program name */
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, ":p:b:w:s:n:c:C:j:o:N:t:qh", longopts, NULL)) !=
	       -1) {
		if (c > 0 && c < 256 && strchr(o.role ? ps_only : wk_only, c))
			die_usage("option -%c (--%s) is for psemu %s only", c,
				  long_name(longopts, c), roles[!o.role]);
		switch (c) {
		case 'p':
			o.port = parse_uint("--port", optarg, 1, 65535);
			break;
		case 'b':
			o.bind = optarg;
			break;
		case 'w':
			o.workers = parse_uint("--workers", optarg, 1, MAX_WORKERS);
			break;
		case 's':
			o.size = parse_size(optarg);
			break;
		case 'n':
			o.iters = parse_uint("--iterations", optarg, 1, MAX_ITERS);
			break;
		case 'c':
			o.connect = optarg;
			break;
		case 'C':
			o.compute_ms = parse_double("--compute", optarg, 0, 3600e3);
			break;
		case 'j':
			o.jitter_ms = parse_double("--jitter", optarg, 0, 3600e3);
			break;
		case OPT_CC:
			if (!*optarg || strlen(optarg) >= 16)
				die_usage("bad value '%s' for --cc (want a name such as cubic)",
					  optarg);
			o.cc = optarg;
			break;
		case OPT_START:
			if (o.role)
				die_usage("option --start-at is for psemu ps only");
			o.start_at = parse_double("--start-at", optarg, 1, 1e11);
			break;
		case OPT_SEED:
			if (!o.role)
				die_usage("option --seed is for psemu worker only");
			o.seed = parse_uint("--seed", optarg, 0, 0x7fffffff);
			o.seeded = true;
			break;
		case 'o':
			if (!*optarg)
				die_usage("empty file name for --output");
			o.output = optarg;
			break;
		case 'N':
			o.name = optarg;
			break;
		case 't':
			o.timeout_s = parse_double("--timeout", optarg, 0.001, 86400);
			break;
		case OPT_JOB:
			if (strcmp(optarg, o.role ? "worker" : "ps"))
				die_usage("--job_name=%s does not match the role %s (want %s)",
					  optarg, roles[o.role], o.role ? "worker" : "ps");
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			die_usage("option '%s' needs an argument", argv[optind]);
		default:
			/* argv + 1 was parsed: its element optind - 1 is argv[optind] */
			die_usage("unknown option '%s' for psemu %s", argv[optind], roles[o.role]);
		}
	}
	if (optind < argc - 1)
		die_usage("unexpected argument '%s'", argv[optind + 1]);
	if (o.role == 1 && !o.connect)
		die_usage("worker needs --connect ADDR:PORT (or DMLC_PS_ROOT_URI and "
			  "DMLC_PS_ROOT_PORT)");

	sendbuf = malloc(CHUNK);
	if (!sendbuf) {
		fprintf(stderr, "psemu: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < CHUNK; i++)
		sendbuf[i] = (char)(i * 7 + 1);
	/* seconds with microseconds: enough, and readable */
	json_c_set_serialization_double_format("%.6f", JSON_C_OPTION_GLOBAL);
	signal(SIGPIPE, SIG_IGN);

	rc = o.role ? run_worker() : run_ps();
	free(sendbuf);
	return rc;
}
