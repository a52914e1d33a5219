// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Prometheus-like scraper at a fixed rate, for bench-ctl.sh: GET /metrics
 * RATE times a second for SECS seconds, each on a new connection, or with
 * -k on one connection kept from one scrape to the next, as Prometheus does
 * (its HTTP client keeps connections alive: prometheus/common's default),
 * connecting again whenever the server closed it.
 *
 * The schedule is open loop: scrape i starts at t0 + i/RATE whatever the
 * ones before took, so a slow tlsd shows as latency and a lower achieved
 * rate, not as a quietly lower load. (wrk, the HTTP load tool Debian has,
 * is closed loop: it sends as fast as answers come and cannot hold a rate.)
 *
 * Usage: bench-scrape [-k] ADDR:PORT RATE SECS
 * Output: `name: value unit` lines: scrapes, achieved rate, answer size,
 * latency (connect, or the request on a kept connection, to the last byte)
 * p50, p99 and max, and the connections made. Exits 1 on the first answer
 * that is not a 200 with a body.
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipv4_port.h"

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int dial(const struct sockaddr_in *sa, const char *host)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		fprintf(stderr, "bench-scrape: connect %s: %s\n", host, strerror(errno));
		exit(1);
	}
	return fd;
}

static size_t connections;

/*
 * One scrape on *fd (-1: connect first): the answer's size, or exit(1) with
 * why. The answer is read to its Content-Length. keep: the connection is
 * kept open afterwards unless the server says it closes, and one the server
 * has closed meanwhile (no answer at all) is connected again once; else the
 * request says Connection: close and the connection is closed.
 */
static size_t scrape(int *fd, const struct sockaddr_in *sa, const char *host, bool keep)
{
	static char buf[1 << 16];
	char req[128];
	int n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\n%s\r\n", host,
			 keep ? "" : "Connection: close\r\n");

	for (int attempt = 0; attempt < 2; attempt++) {
		size_t got = 0, head = 0, clen = 0, total;
		bool fresh = *fd < 0, closes;
		ssize_t r = 0;
		char *end, *cl;

		if (fresh) {
			*fd = dial(sa, host);
			connections++;
		}
		if (write(*fd, req, (size_t)n) != n)
			r = -1;
		/* the head */
		while (r >= 0 && !head && got < sizeof(buf) - 1 &&
		       (r = read(*fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)r;
			buf[got] = '\0';
			end = strstr(buf, "\r\n\r\n");
			if (end)
				head = (size_t)(end - buf) + 4;
		}
		if (!head) {
			close(*fd);
			*fd = -1;
			if (!fresh && got == 0)
				continue; /* closed while idle: once more */
			fprintf(stderr, "bench-scrape: no answer head after %zu bytes\n", got);
			exit(1);
		}
		if (strncmp(buf, "HTTP/1.1 200 ", 13) ||
		    !(cl = strcasestr(buf, "\r\nContent-Length:")) || cl > end) {
			fprintf(stderr, "bench-scrape: answer: %.60s\n", buf);
			exit(1);
		}
		clen = strtoul(cl + 17, NULL, 10);
		cl = strcasestr(buf, "\r\nConnection: close");
		closes = cl && cl < end;
		total = got;
		while (total < head + clen && (r = read(*fd, buf, sizeof(buf))) > 0)
			total += (size_t)r;
		if (total != head + clen || clen < 1000) {
			fprintf(stderr, "bench-scrape: %zu of %zu bytes\n", total, head + clen);
			exit(1);
		}
		if (closes || !keep) {
			close(*fd);
			*fd = -1;
		}
		return total;
	}
	fprintf(stderr, "bench-scrape: the server closed a fresh connection\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	double rate, secs, t0, t_end, *lat;
	size_t i, n, bytes = 0;
	char *end;
	bool keep = argc > 1 && !strcmp(argv[1], "-k");
	int kfd = -1;

	argc -= keep;
	argv += keep;
	if (argc != 4) {
		fprintf(stderr, "usage: bench-scrape [-k] ADDR:PORT RATE SECS\n");
		return 2;
	}
	if (!ipv4_port("bench-scrape", argv[1], &sa))
		return 2;
	rate = strtod(argv[2], &end);
	if (*end || !(rate > 0 && rate <= 10000)) {
		fprintf(stderr, "bench-scrape: RATE '%s' is not a number 0..10000\n", argv[2]);
		return 2;
	}
	secs = strtod(argv[3], &end);
	if (*end || !(secs > 0 && secs <= 3600)) {
		fprintf(stderr, "bench-scrape: SECS '%s' is not a number 0..3600\n", argv[3]);
		return 2;
	}
	n = (size_t)(rate * secs);
	lat = calloc(n ? n : 1, sizeof(*lat));
	if (!lat)
		return 1;
	t0 = mono_s();
	for (i = 0; i < n; i++) {
		double t;

		sleep_until(t0 + (double)i / rate);
		t = mono_s();
		bytes += scrape(&kfd, &sa, argv[1], keep);
		lat[i] = (mono_s() - t) * 1e3;
	}
	t_end = mono_s();
	qsort(lat, n, sizeof(*lat), cmp_dbl);
	printf("scrapes: %zu\n", n);
	printf("scrape_rate_achieved: %.1f /s\n", (double)n / (t_end - t0));
	printf("scrape_bytes_mean: %zu bytes\n", n ? bytes / n : 0);
	printf("scrape_latency_ms_p50: %.3f ms\n", lat[(n - 1) / 2]);
	printf("scrape_latency_ms_p99: %.3f ms\n", lat[(size_t)((double)(n - 1) * 0.99)]);
	printf("scrape_latency_ms_max: %.3f ms\n", lat[n - 1]);
	printf("scrape_connections: %zu\n", connections);
	if (kfd >= 0)
		close(kfd);
	free(lat);
	return 0;
}
