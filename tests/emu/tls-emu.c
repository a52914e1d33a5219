/*
 * tls-emu - PS/worker TCP traffic emulator for the tlsd namespace tests, demo and benchmarks.
 * sink: worker listener that discards; pull: worker that dials a PS and discards what it gets;
 * ps: parameter server that sends "model updates" to accepted and/or dialled connections.
 *
 * Addresses are numeric only, so a test can never resolve its way to a place it did not name.
 * Each role is one thread around one poll set. SIGTERM/SIGINT/SIGUSR1 stay blocked and are read
 * from a signalfd in that set: no EINTR races, and a "go" that arrives early or twice is
 * neither lost nor fatal.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu_addr.h"

#define BUF_SZ	     (64 * 1024)
#define DIAL_RETRY_S 5.0 /* the tests start both ends at once */
#define TICK_MS	     100 /* dial's pace while waiting for a listener */

static bool stop; /* SIGTERM/SIGINT seen, or a connect failed */
static bool go;	  /* SIGUSR1 seen */
static int sigfd = -1;
static char sbuf[BUF_SZ];  /* what ps sends */
static uint64_t ps_budget; /* -b: bytes per connection, 0 = unlimited */
static double ps_rate;	   /* -r: bytes/s per connection, 0 = unlimited */

static const char usage_text[] =
	"Usage: tls-emu sink -l ADDR:PORT [-l ADDR:PORT ...] [-t SECONDS]\n"
	"       tls-emu pull -c ADDR:PORT [-c ADDR:PORT ...] [-t SECONDS]\n"
	"       tls-emu ps [-l ADDR:PORT ...] [-c ADDR:PORT ...] [-n CONNS] [-b BYTES]\n"
	"                  [-t SECONDS] [-r RATE_MBIT] [-w]\n"
	"ADDR:PORT is numeric: 198.18.0.1:9000 or [fd00::1]:9000.\n"
	"sink  accept any number of connections on each -l, discard what arrives\n"
	"pull  dial each -c (retried for 5 s), discard what arrives, exit once all are closed\n"
	"ps    send to each connection accepted on -l and to -n (default 1) connections dialled\n"
	"      to each -c (retried for 5 s); exits when those are done unless it listens\n"
	"  -b  send BYTES per connection, then shut down writing\n"
	"  -t  send for SECONDS, then shut down writing (sink, pull: run for at most SECONDS)\n"
	"      either way ps closes a connection once the peer has read all and closed it\n"
	"  -r  pace each connection to RATE_MBIT megabit/s\n"
	"  -w  print 'ready pid=PID', then wait for SIGUSR1 before dialling or sending\n"
	"      (without -w, 'ready pid=PID' is printed as soon as ps listens)\n"
	"SIGTERM/SIGINT end any role cleanly (exit 0); byte counts are printed on exit.\n"
	"Arguments after -- are ignored: labels, e.g. -- --job_name=ps to stand in for a PS.\n"
	"  -V, --version  print the version\n"
	"Bad usage exits 2, runtime errors 1.\n";

static void __attribute__((noreturn, format(printf, 1, 2))) die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("tls-emu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tls-emu --help'.\n", stderr);
	exit(2);
}

static void __attribute__((noreturn)) die_sys(const char *what, const char *obj)
{
	fprintf(stderr, "tls-emu: %s%s%s: %s\n", what, *obj ? " " : "", obj, strerror(errno));
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die_sys("realloc", "");
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* poll() timeout until @deadline (0 = none); capped only to keep the int from overflowing */
static int ms_until(double deadline)
{
	double left = deadline - now();

	if (deadline <= 0)
		return -1;
	return left <= 0 ? 0 : left > 60 ? 60000 : (int)(left * 1000) + 1;
}

static void parse_addr(const char *arg, struct addr *a)
{
	struct sockaddr_in6 *s6 = (void *)&a->ss;
	struct sockaddr_in *s4 = (void *)&a->ss;
	const char *p, *host = arg;
	char ip[INET6_ADDRSTRLEN], *end;
	unsigned long port;
	bool v6 = arg[0] == '[';
	size_t n;

	memset(a, 0, sizeof(*a));
	if (v6) {
		host = arg + 1;
		p = strchr(arg, ']');
		if (!p || p[1] != ':')
			die_usage("malformed address '%s' (want [IPV6]:PORT)", arg);
		n = p++ - host;
	} else {
		/* a bare IPv6 address has more than one colon, and the port would be ambiguous */
		p = strrchr(arg, ':');
		if (!p || memchr(arg, ':', p - arg))
			die_usage("malformed address '%s' (want IPV4:PORT or [IPV6]:PORT)", arg);
		n = p - host;
	}
	if (n >= sizeof(ip))
		n = 0; /* too long to be an address: let inet_pton() reject "" */
	memcpy(ip, host, n);
	ip[n] = '\0';
	/* inet_pton, unlike getaddrinfo, refuses shorthand such as "127.1" */
	if (inet_pton(v6 ? AF_INET6 : AF_INET, ip,
		      v6 ? (void *)&s6->sin6_addr : (void *)&s4->sin_addr) != 1)
		die_usage("malformed IPv%d address in '%s'", v6 ? 6 : 4, arg);

	errno = 0;
	port = strtoul(p + 1, &end, 10);
	if (p[1] < '0' || p[1] > '9' || *end)
		die_usage("malformed port in '%s'", arg);
	if (errno || port < 1 || port > 65535)
		die_usage("port out of range in '%s' (want 1-65535)", arg);
	a->ss.ss_family = v6 ? AF_INET6 : AF_INET;
	a->len = v6 ? sizeof(*s6) : sizeof(*s4);
	/* sin_port and sin6_port sit at the same offset */
	s4->sin_port = htons(port);
	fmt_addr(&a->ss, a->str, sizeof(a->str));
}

static struct addr *add_addr(struct addr *v, size_t *n, const char *arg)
{
	v = xrealloc(v, (*n + 1) * sizeof(*v));
	parse_addr(arg, &v[(*n)++]);
	return v;
}

/* A positive number up to @max, whole if @whole; strtod also lets -b take 1e7. */
static double parse_num(char opt, const char *s, double max, bool whole)
{
	char *end;
	double v = strtod(s, &end);

	/* written so that NaN and inf fail too */
	if (end == s || *end || !(v > 0 && v <= max) || (whole && v != (double)(uint64_t)v))
		die_usage("bad value '%s' for -%c (want a %snumber > 0 and <= %g)", s, opt,
			  whole ? "whole " : "", max);
	return v;
}

/* Drain the signalfd; true once we have been told to stop. */
static bool check_signals(void)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			go = true;
		else
			stop = true;
	}
	return stop;
}

static int listen_on(const struct addr *a)
{
	int one = 1, fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die_sys("socket", a->str);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die_sys("setsockopt SO_REUSEADDR", a->str);
	/* so that [::]:P and 0.0.0.0:P can be given side by side */
	if (a->ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)))
		die_sys("setsockopt IPV6_V6ONLY", a->str);
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len))
		die_sys("bind", a->str);
	if (listen(fd, SOMAXCONN))
		die_sys("listen", a->str);
	return fd;
}

static int accept_nb(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0 && errno != EAGAIN && errno != ECONNABORTED && errno != EINTR) {
		fprintf(stderr, "tls-emu: accept: %s\n", strerror(errno));
		/* e.g. EMFILE: the listener stays readable, so don't spin */
		poll(NULL, 0, TICK_MS);
	}
	return fd;
}

/*
 * Dial @a from an ephemeral port, retrying while nobody listens yet. Non-blocking, so that a
 * stop signal is honoured even mid-handshake. Returns a non-blocking fd, -1 with errno set on
 * failure, or -2 if told to stop.
 */
static int dial(const struct addr *a)
{
	double give_up = now() + DIAL_RETRY_S, limit;
	struct pollfd p = { .events = POLLOUT };
	socklen_t elen = sizeof(int);
	int err;

	for (;;) {
		p.fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (p.fd < 0)
			return -1;
		err = connect(p.fd, (const struct sockaddr *)&a->ss, a->len) ? errno : 0;
		/* a handshake under way gets its full time, so a refusal isn't told as a timeout */
		limit = now() + DIAL_RETRY_S;
		while (err == EINPROGRESS && !check_signals() && now() < limit)
			if (poll(&p, 1, TICK_MS) > 0 &&
			    getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &elen))
				err = errno;
		if (!err)
			return p.fd;
		close(p.fd);
		if (stop)
			return -2;
		errno = err == EINPROGRESS ? ETIMEDOUT : err;
		if ((errno != ECONNREFUSED && errno != ENETUNREACH && errno != EHOSTUNREACH) ||
		    now() >= give_up)
			return -1;
		poll(NULL, 0, TICK_MS);
	}
}

/* One per thing whose bytes get reported: a sink listener, a pull or a ps connection. */
struct tally {
	uint64_t bytes, conns;
	char local[ADDR_LEN], peer[ADDR_LEN];
};

/*
 * ent[i] says what pfd[i] is. A ps connection goes E_SND -> E_DRAIN once its -b budget is out
 * or -t is up: from then on it only waits for the peer's close.
 */
enum role { SINK, PULL, PS };
enum kind { E_SIG, E_LSN, E_RCV, E_SND, E_DRAIN };

static struct ent {
	enum kind kind;
	struct tally *st;
	double t0; /* E_SND: origin of the pacing schedule */
} * ent;
static struct pollfd *pfd;
static size_t nent, nconn; /* nconn: entries that are connections */
static struct tally **stats;
static size_t nstats;

static struct tally *tally_new(int fd, const char *local, const char *peer)
{
	struct tally *st = calloc(1, sizeof(*st));
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!st)
		die_sys("calloc", "");
	snprintf(st->local, sizeof(st->local), "%s", local);
	snprintf(st->peer, sizeof(st->peer), "%s", peer);
	/* a ps connection records both ends now: getpeername() fails once the peer has gone */
	if (fd >= 0 && !getsockname(fd, (struct sockaddr *)&ss, &len))
		fmt_addr(&ss, st->local, sizeof(st->local));
	len = sizeof(ss);
	if (fd >= 0 && !getpeername(fd, (struct sockaddr *)&ss, &len))
		fmt_addr(&ss, st->peer, sizeof(st->peer));
	stats = xrealloc(stats, (nstats + 1) * sizeof(*stats));
	return stats[nstats++] = st;
}

static void ent_add(int fd, enum kind kind, struct tally *st)
{
	/* growing one by one is plenty for the handful of connections this ever sees */
	ent = xrealloc(ent, (nent + 1) * sizeof(*ent));
	pfd = xrealloc(pfd, (nent + 1) * sizeof(*pfd));
	ent[nent] = (struct ent){ .kind = kind, .st = st, .t0 = now() };
	pfd[nent++] = (struct pollfd){ .fd = fd, .events = kind == E_SND ? 0 : POLLIN };
	nconn += kind >= E_RCV;
}

/* Close entry @i; the last entry moves into its slot. */
static void ent_del(size_t i)
{
	close(pfd[i].fd);
	nconn -= ent[i].kind >= E_RCV;
	ent[i] = ent[--nent];
	pfd[i] = pfd[nent];
}

/* Arm the senders: POLLOUT only for those whose pacing lets them send. Returns the timeout. */
static int arm_senders(bool started, double deadline)
{
	int timeout = ms_until(deadline), ms;
	double t = now(), due;

	for (size_t i = 0; i < nent; i++) {
		if (ent[i].kind != E_SND)
			continue;
		/* no burst allowance: byte k may leave at t0 + k / rate */
		due = ps_rate > 0 ? ent[i].t0 + ent[i].st->bytes / ps_rate : 0;
		pfd[i].events = started && due <= t ? POLLOUT : 0;
		ms = ms_until(due);
		if (started && due > t && (timeout < 0 || ms < timeout))
			timeout = ms;
	}
	return timeout;
}

/*
 * Done sending (-b spent or -t up): stay until the peer has read everything and closed, because
 * behind a shaper the data may sit in our socket buffer for long, and a test that stops the sink
 * as soon as ps exits must still see every byte ps counted.
 */
static void end_send(size_t i)
{
	shutdown(pfd[i].fd, SHUT_WR);
	ent[i].kind = E_DRAIN;
	pfd[i].events = POLLIN;
}

static void do_send(size_t i)
{
	struct tally *st = ent[i].st;
	size_t chunk = sizeof(sbuf);
	ssize_t n;

	/* not armed yet (before go, or paced) and still woken: error or hangup, the peer is gone */
	if (!(pfd[i].revents & POLLOUT)) {
		ent_del(i);
		return;
	}
	/* ~20 ms worth per write keeps slow rates smooth */
	if (ps_rate > 0 && ps_rate / 50 < chunk)
		chunk = ps_rate / 50 < 1500 ? 1500 : (size_t)(ps_rate / 50);
	if (ps_budget && ps_budget - st->bytes < chunk)
		chunk = ps_budget - st->bytes;
	n = send(pfd[i].fd, sbuf, chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		/* the peer going away ends this connection, nothing more */
		if (errno != EPIPE && errno != ECONNRESET)
			fprintf(stderr, "tls-emu: send %s: %s\n", st->peer, strerror(errno));
		ent_del(i);
		return;
	}
	st->bytes += n;
	if (ps_budget && st->bytes >= ps_budget)
		end_send(i);
}

/* Dial every -c target, -n times each; pull's tallies exist already, one per target. */
static int dial_all(enum role role, const struct addr *cs, size_t nc, size_t per)
{
	int fd;

	for (size_t k = 0; k < nc * per && !stop; k++) {
		fd = dial(&cs[k / per]);
		if (fd == -1) {
			fprintf(stderr, "tls-emu: connect %s: %s\n", cs[k / per].str,
				strerror(errno));
			stop = true;
			return 1;
		}
		if (fd >= 0 && role == PS)
			ent_add(fd, E_SND, tally_new(fd, "", ""));
		else if (fd >= 0)
			ent_add(fd, E_RCV, stats[k]);
	}
	return 0;
}

static int run(enum role role, const struct addr *ls, size_t nl, const struct addr *cs, size_t nc,
	       size_t per, double secs, bool wait_go)
{
	static char rbuf[BUF_SZ];
	bool started = false;
	double deadline = 0;
	uint64_t total = 0;
	int fd, rc = 0;
	size_t i, k;
	ssize_t n;

	ent_add(sigfd, E_SIG, NULL);
	for (i = 0; i < nl; i++)
		ent_add(listen_on(&ls[i]), E_LSN,
			role == SINK ? tally_new(-1, ls[i].str, "") : NULL);
	if (role == PS) {
		/* SIGUSR1 has been blocked since main() began, so an early go is kept */
		printf("ready pid=%d\n", (int)getpid());
		fflush(stdout);
	}
	for (i = 0; role == PULL && i < nc; i++)
		tally_new(-1, "", cs[i].str);

	while (!stop) {
		if (!started && (go || !wait_go)) {
			/* workers that dialled in while we waited are served from now on */
			started = true;
			for (k = 0; k < nent; k++)
				ent[k].t0 = now();
			rc = dial_all(role, cs, nc, per);
			/* -t counts from here: time spent waiting for a late listener is free */
			deadline = secs ? now() + secs : 0;
			continue;
		}
		if (started && role != SINK && !nl && !nconn)
			break;
		if (poll(pfd, nent, arm_senders(started, deadline)) < 0) {
			if (errno != EINTR)
				die_sys("poll", "");
			continue;
		}
		if (check_signals())
			break;
		if (deadline && now() >= deadline) {
			if (role != PS)
				break;
			/* no more accepts; whatever still sends ends the way -b ends it */
			for (i = nent; i-- > 1;) {
				if (ent[i].kind == E_LSN)
					ent_del(i);
				else if (ent[i].kind == E_SND)
					end_send(i);
			}
			nl = 0;
			deadline = 0;
			continue;
		}
		/* backwards: ent_del() moves the last, already visited, entry into slot i */
		for (i = nent; i-- > 1;) {
			if (!pfd[i].revents)
				continue;
			if (ent[i].kind == E_LSN) {
				while ((fd = accept_nb(pfd[i].fd)) >= 0) {
					if (role == PS) {
						ent_add(fd, E_SND, tally_new(fd, "", ""));
						continue;
					}
					ent[i].st->conns++;
					ent_add(fd, E_RCV, ent[i].st);
				}
			} else if (ent[i].kind == E_SND) {
				do_send(i);
			} else {
				n = recv(pfd[i].fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);
				if (n > 0 && ent[i].kind == E_RCV)
					ent[i].st->bytes += n;
				/* EOF, reset or any other error ends just this connection */
				if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
					ent_del(i);
			}
		}
	}

	for (i = 0; i < nstats; i++) {
		if (role == SINK)
			printf("sink %s bytes=%" PRIu64 " conns=%" PRIu64 "\n", stats[i]->local,
			       stats[i]->bytes, stats[i]->conns);
		else if (role == PULL)
			printf("pull %s bytes=%" PRIu64 "\n", stats[i]->peer, stats[i]->bytes);
		else
			printf("ps conn local=%s peer=%s bytes=%" PRIu64 "\n", stats[i]->local,
			       stats[i]->peer, stats[i]->bytes);
		total += stats[i]->bytes;
		free(stats[i]);
	}
	if (role == PS)
		printf("ps total bytes=%" PRIu64 "\n", total);
	while (nent > 1)
		ent_del(nent - 1);
	free(stats);
	free(ent);
	free(pfd);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	static const char *const roles[] = { "sink", "pull", "ps" };
	static const char *const optstr[] = { ":hl:t:", ":hc:t:", ":hl:c:b:t:r:n:w" };
	struct addr *ls = NULL, *cs = NULL;
	size_t nl = 0, nc = 0, per = 1, i;
	double secs = 0;
	bool wait_go = false;
	int o, r, rc;
	sigset_t set;

	if (argc < 2)
		die_usage("missing role (sink, pull or ps)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("tls-emu %s\n", TLS_VERSION);
		return 0;
	}
	for (r = 0; r < 3 && strcmp(argv[1], roles[r]); r++)
		;
	if (r == 3)
		die_usage("unknown role '%s' (want sink, pull or ps)", argv[1]);

	/* parse argv[1..], so that getopt takes the role for the program name */
	opterr = 0;
	while ((o = getopt_long(argc - 1, argv + 1, optstr[r], longopts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'l':
			ls = add_addr(ls, &nl, optarg);
			break;
		case 'c':
			cs = add_addr(cs, &nc, optarg);
			break;
		case 'b':
			ps_budget = (uint64_t)parse_num('b', optarg, 1e15, true);
			break;
		case 't':
			secs = parse_num('t', optarg, 1e9, false);
			break;
		case 'r':
			ps_rate = parse_num('r', optarg, 1e9, false) * 1e6 / 8;
			break;
		case 'n':
			per = (size_t)parse_num('n', optarg, 4096, true);
			break;
		case 'w':
			wait_go = true;
			break;
		case ':':
			die_usage("option -%c needs an argument", optopt);
		default:
			if (optopt)
				die_usage("unknown option '-%c' for %s", optopt, roles[r]);
			die_usage("unknown option '%s' for %s", argv[optind], roles[r]);
		}
	}
	/* after "--": labels that only tell who this stands in for (a PS
	 * launcher's command line, for discovery tests); ignored */
	if (optind < argc - 1 && strcmp(argv[optind], "--"))
		die_usage("unexpected argument '%s'", argv[optind + 1]);
	if ((r == 0 && !nl) || (r == 1 && !nc) || (r == 2 && !nl && !nc))
		die_usage("%s needs %s", roles[r],
			  r == 0 ? "-l ADDR:PORT" :
			  r == 1 ? "-c ADDR:PORT" :
				   "-l ADDR:PORT and/or -c ADDR:PORT");

	/* peers vanishing is routine here; send() reports it per connection */
	signal(SIGPIPE, SIG_IGN);
	/* blocked, they queue for the signalfd instead of killing us or interrupting calls */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die_sys("sigprocmask", "");
	sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		die_sys("signalfd", "");
	for (i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char)(i * 7 + 1);

	rc = run(r, ls, nl, cs, nc, per, secs, wait_go);
	close(sigfd);
	free(ls);
	free(cs);
	return rc;
}
