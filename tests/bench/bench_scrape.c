// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Prometheus-like scraper at a fixed rate, for bench-ctl.sh: GET /metrics
 * on a new connection RATE times a second for SECS seconds, as Prometheus
 * does (one connection per scrape is what tlsd's endpoint serves).
 *
 * The schedule is open loop: scrape i starts at t0 + i/RATE whatever the
 * ones before took, so a slow tlsd shows as latency and a lower achieved
 * rate, not as a quietly lower load. (wrk, the HTTP load tool Debian has,
 * is closed loop: it sends as fast as answers come and cannot hold a rate.)
 *
 * Usage: bench-scrape ADDR:PORT RATE SECS
 * Output: `name: value unit` lines: scrapes, achieved rate, answer size,
 * latency (connect to last byte) p50, p99 and max. Exits 1 on the first
 * answer that is not a 200 with a body.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

/* One scrape: the answer's size, or exit(1) with why. */
static size_t scrape(const struct sockaddr_in *sa, const char *host)
{
	static char buf[1 << 16];
	char req[128];
	size_t total = 0, head = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", host);
	ssize_t r;

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		fprintf(stderr, "bench-scrape: connect %s: %s\n", host, strerror(errno));
		exit(1);
	}
	if (write(fd, req, (size_t)n) != n) {
		fprintf(stderr, "bench-scrape: send: %s\n", strerror(errno));
		exit(1);
	}
	/* tlsd closes after its answer: read to the end */
	while ((r = read(fd, buf + head, sizeof(buf) - head)) > 0) {
		if (!total && head + (size_t)r < 13) { /* the status line's start */
			head += (size_t)r;
			continue;
		}
		if (!total && strncmp(buf, "HTTP/1.1 200 ", 13)) {
			fprintf(stderr, "bench-scrape: answer: %.40s\n", buf);
			exit(1);
		}
		total += head + (size_t)r;
		head = 0;
	}
	close(fd);
	if (r < 0 || total < 1000) {
		fprintf(stderr, "bench-scrape: %s after %zu bytes\n",
			r < 0 ? strerror(errno) : "short answer", total);
		exit(1);
	}
	return total;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	double rate, secs, t0, t_end, *lat;
	size_t i, n, bytes = 0;
	char *colon, *end;
	long port;

	if (argc != 4) {
		fprintf(stderr, "usage: bench-scrape ADDR:PORT RATE SECS\n");
		return 2;
	}
	colon = strrchr(argv[1], ':');
	port = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || *end || port < 1 || port > 65535) {
		fprintf(stderr, "bench-scrape: '%s' is not IPV4:PORT\n", argv[1]);
		return 2;
	}
	*colon = '\0';
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "bench-scrape: '%s' is not an IPv4 address\n", argv[1]);
		return 2;
	}
	*colon = ':';
	sa.sin_port = htons((uint16_t)port);
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
		bytes += scrape(&sa, argv[1]);
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
	free(lat);
	return 0;
}
