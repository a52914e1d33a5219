// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control socket's latencies, against a running tlsd (bench-ctl.sh
 * starts it):
 *  - status round trip: connect, send `status`, read the reply, close (what
 *    one tlsctl call pays, without its process start); and the same on one
 *    kept connection;
 *  - policy switch: from just before a `policy` request is sent until the
 *    band of a job changes in the classifier's job map (read from the pinned
 *    map's memory in a busy loop), alternating fifo and one. Job 2 is in
 *    band 1 under one and in band 0 under fifo.
 *
 * Usage: bench-ctl SOCKET PIN_DIR ROUNDS
 * Output: `name: value unit` lines (medians; p90 and max for the switch).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "ctl_proto.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "bench-ctl: cannot connect to %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Send a request line, read one reply line; check it is ok. */
static void roundtrip(int fd, const char *req)
{
	static char buf[1 << 16];
	size_t len = 0;

	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		fprintf(stderr, "bench-ctl: send: %s\n", strerror(errno));
		exit(1);
	}
	while (!len || buf[len - 1] != '\n') {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0 || len + (size_t)n >= sizeof(buf) - 1) {
			fprintf(stderr, "bench-ctl: no reply\n");
			exit(1);
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (!strstr(buf, "\"ok\":true")) {
		fprintf(stderr, "bench-ctl: tlsd refused %s: %s", req, buf);
		exit(1);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[(int)(p * (n - 1) + 0.5)];
}

int main(int argc, char **argv)
{
	static const char status[] = "{\"version\":1,\"cmd\":\"status\"}\n";
	struct tls_maps m;
	double *fresh, *kept, *sw, t0;
	int rounds, i, fd;
	__u32 job = 2;

	if (argc != 4 || (rounds = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: bench-ctl SOCKET PIN_DIR ROUNDS\n");
		return 2;
	}
	fresh = calloc((size_t)rounds, sizeof(double));
	kept = calloc((size_t)rounds, sizeof(double));
	sw = calloc((size_t)rounds, sizeof(double));
	if (!fresh || !kept || !sw || tls_maps_open_pinned(argv[2], &m) || tls_maps_map_jobs(&m)) {
		fprintf(stderr, "bench-ctl: cannot open the maps pinned in %s\n", argv[2]);
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		t0 = now_ms();
		fd = connect_to(argv[1]);
		roundtrip(fd, status);
		close(fd);
		fresh[i] = now_ms() - t0;
	}
	fd = connect_to(argv[1]);
	for (i = 0; i < rounds; i++) {
		t0 = now_ms();
		roundtrip(fd, status);
		kept[i] = now_ms() - t0;
	}
	/* Start from one (job 2 in band 1), then alternate. */
	roundtrip(fd, "{\"version\":1,\"cmd\":\"policy\",\"policy\":\"one\"}\n");
	for (i = 0; i < rounds; i++) {
		const char *req =
			i % 2 ? "{\"version\":1,\"cmd\":\"policy\",\"policy\":\"one\"}\n" :
				"{\"version\":1,\"cmd\":\"policy\",\"policy\":\"fifo\"}\n";
		volatile struct tls_job *j = &m.jobs_mem[job];
		__u32 want = i % 2 ? 1 : 0;
		size_t len = strlen(req);

		t0 = now_ms();
		if (write(fd, req, len) != (ssize_t)len)
			return 1;
		while (!((j->flags & TLS_JOB_F_BAND) && j->band == want)) {
			if (now_ms() - t0 > 5000) {
				fprintf(stderr, "bench-ctl: band of job %u not %u after 5 s\n", job,
					want);
				return 1;
			}
		}
		sw[i] = now_ms() - t0;
		roundtrip(fd, ""); /* its reply */
	}
	roundtrip(fd, "{\"version\":1,\"cmd\":\"policy\",\"reset\":true}\n");
	close(fd);
	printf("ctl_status_rtt_fresh_connection_ms_p90: %.3f ms\n", pct(fresh, rounds, 0.9));
	printf("ctl_status_rtt_kept_connection_ms_median: %.3f ms\n", pct(kept, rounds, 0.5));
	printf("ctl_policy_switch_ms_p90: %.3f ms\n", pct(sw, rounds, 0.9));
	printf("ctl_policy_switch_ms_max: %.3f ms\n", pct(sw, rounds, 1.0));
	printf("ctl_status_rtt_ms_median: %.3f ms\n", pct(fresh, rounds, 0.5));
	printf("ctl_policy_switch_ms_median: %.3f ms\n", pct(sw, rounds, 0.5));
	tls_maps_close(&m);
	return 0;
}
