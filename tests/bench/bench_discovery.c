// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench-discovery: how fast tlsd finds a new PS and forgets one that exited.
 *
 *   bench-discovery launch PIN_DIR WK_NETNS PS_ADDR WK_ADDR:PORT N
 *     runs N PS launches of each kind, from this (the PS host's) namespace:
 *     - listen: a PS (DMLC_ROLE=server, its own job key) execs, listens and
 *       records the time; a worker (a socket in WK_NETNS) connects; the PS
 *       sends. The figure: from listen() to the first packet of that
 *       connection classified in a job (seen in the classifier's flows by
 *       polling them every 0.5 ms).
 *     - connect: a PS execs and at once dials WK_ADDR:PORT and sends. From
 *       connect() to its first classified packet.
 *     - exit: each PS is then killed; from its exit (reaped) to tlsd freeing
 *       its job id (the job's band gone from the pinned job map: tlsd
 *       runs roundrobin, where every job it knows has one).
 *     Prints `name: value unit` lines.
 *   bench-discovery churn RATE SECONDS
 *     fork+exec /bin/true RATE times a second (no PS), for the CPU figure.
 *   bench-discovery child-listen ADDR PORT / child-connect ADDR PORT
 *     the stand-in PS (exec'd by launch, reports on fd 3).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "procfs.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-discovery: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in addr4(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "bench-discovery: bad IPv4 address '%s'\n", ip);
		exit(2);
	}
	return a;
}

static void send_forever(int fd)
{
	static char buf[16384];

	for (;;)
		if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) < 0 && errno != EINTR)
			exit(0);
}

static int child(bool listening, const char *ip, int port)
{
	struct sockaddr_in a = addr4(ip, port), l;
	socklen_t ll = sizeof(l);
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;
	uint64_t t;

	if (s < 0)
		die("socket");
	if (listening) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (void *)&a, sizeof(a)))
			die("bind");
		t = now_ns();
		if (listen(s, 4))
			die("listen");
		dprintf(3, "%llu 0\n", (unsigned long long)t);
		c = accept(s, NULL, NULL);
		if (c < 0)
			die("accept");
		send_forever(c);
	}
	t = now_ns();
	if (connect(s, (void *)&a, sizeof(a)))
		die("connect");
	getsockname(s, (void *)&l, &ll);
	dprintf(3, "%llu %u\n", (unsigned long long)t, ntohs(l.sin_port));
	send_forever(s);
	return 0;
}

struct want {
	uint16_t lport; /* host order */
	uint64_t first_ns;
	uint32_t job;
};

static int find_flow(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	struct want *w = ctx;

	if (ntohs(k->lport) != w->lport || !f->job || !f->first_ns)
		return 0;
	w->first_ns = f->first_ns;
	w->job = f->job;
	return 1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i;

	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_d);
	i = (int)(p * (n - 1) + 0.5);
	return v[i];
}

/* One launch: returns the latency to classification (ms) and the exit to
 * removal time (ms) in *exit_ms, or -1 on a timeout. */
static double launch(const struct tls_maps *m, const char *self, int wk_ns, bool listening,
		     const char *ps_ip, const char *wk_ip, int wk_port, int key, double *exit_ms)
{
	char port_s[16], key_s[16], line[64];
	int pfd[2], wk = -1, status;
	unsigned long long t0;
	unsigned int cport;
	struct want w = {};
	uint64_t t_exit, deadline;
	double lat = -1;
	pid_t pid;
	FILE *f;

	*exit_ms = -1;
	if (pipe(pfd))
		die("pipe");
	snprintf(port_s, sizeof(port_s), "%d", listening ? key : wk_port);
	snprintf(key_s, sizeof(key_s), "%d", key);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		dup2(pfd[1], 3);
		setenv("DMLC_ROLE", "server", 1);
		setenv("DMLC_PS_ROOT_PORT", key_s, 1);
		execl(self, self, listening ? "child-listen" : "child-connect",
		      listening ? ps_ip : wk_ip, port_s, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || sscanf(line, "%llu %u", &t0, &cport) != 2) {
		fprintf(stderr, "bench-discovery: PS %d did not report\n", pid);
		goto out;
	}
	if (listening) {
		struct sockaddr_in a = addr4(ps_ip, key);

		wk = tls_netns_socket(wk_ns, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (wk < 0 || connect(wk, (void *)&a, sizeof(a)))
			die("worker connect");
		cport = key;
	}
	w.lport = cport;
	deadline = now_ns() + 3000000000ULL;
	while (now_ns() < deadline && !w.job) {
		tls_for_each_flow(m, find_flow, &w);
		if (!w.job)
			usleep(500);
	}
	/* When this loop saw it: an upper bound by one poll (0.5 ms plus a
	 * flow walk). The flow's own first_ns would be closer, but it comes
	 * from the coarse clock, which lags by up to a tick. */
	if (w.job)
		lat = ((double)now_ns() - (double)t0) / 1e6;
	else
		fprintf(stderr, "bench-discovery: PS %d (%s) not classified in 3 s\n", pid,
			listening ? "listen" : "connect");
out:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t_exit = now_ns();
	if (w.job) {
		__u32 band = 0;

		deadline = t_exit + 3000000000ULL;
		while (now_ns() < deadline) {
			if (tls_get_job_band(m, w.job, &band) == 0 && band == TLS_BAND_NONE)
				break;
			usleep(200);
		}
		if (band == TLS_BAND_NONE)
			*exit_ms = (now_ns() - t_exit) / 1e6;
	}
	if (wk >= 0)
		close(wk);
	if (f)
		fclose(f);
	else
		close(pfd[0]);
	return lat;
}

static int run_launches(int argc, char **argv)
{
	const char *pin = argv[2], *ps_ip = argv[4];
	char wk_ip[64], *colon;
	int n = atoi(argv[6]), wk_ns, wk_port, i, nl = 0, nc = 0, ne = 0;
	double *l = calloc(n, sizeof(double)), *c = calloc(n, sizeof(double)),
	       *e = calloc(2 * n, sizeof(double));
	struct tls_maps m;
	char self[4096];
	ssize_t sl;

	(void)argc;
	snprintf(wk_ip, sizeof(wk_ip), "%s", argv[5]);
	colon = strrchr(wk_ip, ':');
	if (!colon || n < 1 || !l || !c || !e) {
		fprintf(stderr, "bench-discovery: bad arguments\n");
		return 2;
	}
	*colon = '\0';
	wk_port = atoi(colon + 1);
	wk_ns = open(argv[3], O_RDONLY | O_CLOEXEC);
	if (wk_ns < 0)
		die(argv[3]);
	if (tls_maps_open_pinned(pin, &m))
		return 1;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl < 0)
		die("readlink");
	self[sl] = '\0';
	for (i = 0; i < n; i++) {
		double x, ex;

		x = launch(&m, self, wk_ns, true, ps_ip, wk_ip, wk_port, 30000 + i, &ex);
		if (x >= 0)
			l[nl++] = x;
		if (ex >= 0)
			e[ne++] = ex;
		usleep(20000);
		x = launch(&m, self, wk_ns, false, ps_ip, wk_ip, wk_port, 40000 + i, &ex);
		if (x >= 0)
			c[nc++] = x;
		if (ex >= 0)
			e[ne++] = ex;
		usleep(20000);
	}
	printf("launches: %d listen (%d classified), %d connect (%d classified), %d removals\n", n,
	       nl, n, nc, ne);
	printf("discovery_listen_ms_median: %.2f ms\n", pct(l, nl, 0.5));
	printf("discovery_listen_ms_p99: %.2f ms\n", pct(l, nl, 0.99));
	printf("discovery_connect_ms_median: %.2f ms\n", pct(c, nc, 0.5));
	printf("discovery_connect_ms_p99: %.2f ms\n", pct(c, nc, 0.99));
	printf("discovery_exit_ms_median: %.2f ms\n", pct(e, ne, 0.5));
	printf("discovery_exit_ms_p99: %.2f ms\n", pct(e, ne, 0.99));
	tls_maps_close(&m);
	free(l);
	free(c);
	free(e);
	return nl == n && nc == n && ne == 2 * n ? 0 : 1;
}

static int churn(int rate, int secs)
{
	uint64_t start = now_ns(), period = 1000000000ULL / rate, next = start;
	long done = 0;

	while (now_ns() < start + secs * 1000000000ULL) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		done++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += period;
		while (now_ns() < next)
			usleep(100);
	}
	while (wait(NULL) > 0)
		;
	printf("churn: %ld exec in %d s (%.0f/s)\n", done, secs, (double)done / secs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child-listen"))
		return child(true, argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "child-connect"))
		return child(false, argv[2], atoi(argv[3]));
	if (argc == 7 && !strcmp(argv[1], "launch"))
		return run_launches(argc, argv);
	if (argc == 4 && !strcmp(argv[1], "churn") && atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
		return churn(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: bench-discovery launch PIN_DIR WK_NETNS PS_ADDR WK_ADDR:PORT N\n"
			"       bench-discovery churn RATE SECONDS\n");
	return 2;
}
