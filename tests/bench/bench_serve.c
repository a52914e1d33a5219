// SPDX-License-Identifier: GPL-2.0-only
/*
 * The least a metrics endpoint can cost, for bench-ctl.sh: an HTTP server
 * that answers every GET with the same body, read once from a file (a
 * scrape of tlsd saved just before), and does nothing else. bench-ctl.sh
 * scrapes it at the rate it scrapes tlsd and reports its CPU beside
 * tlsd's, so that the part of tlsd's figure that is the kernel's (the
 * wake-ups, the loopback TCP, the copy) on the machine at hand is measured,
 * not guessed.
 *
 * It does what tlsd's endpoint does for a scrape on a kept connection and
 * no more: one epoll_pwait, one recv of the request head, one sendmsg of
 * the head and the body (two iovecs), as tlsd sends a kept answer. No
 * parsing beyond the end of the head, no deadlines, no limits: a
 * benchmark's loopback peer, never a server for anyone else (it listens
 * on the address given, which bench-ctl.sh puts in its own namespace's
 * loopback).
 *
 * Usage: bench-serve ADDR:PORT FILE
 * Runs until SIGTERM or SIGINT; exits 1 with the reason on any error.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipv4_port.h"

#define MAX_CONNS 64
#define MAX_FDS	  256 /* a connection on a higher fd is closed */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-serve: %s: %s\n", what, strerror(errno));
	exit(1);
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;

	if (fd < 0 || fstat(fd, &st))
		die(path);
	if (st.st_size < 1 || st.st_size > (64 << 20)) {
		fprintf(stderr, "bench-serve: %s: size %lld, not 1 B..64 MiB\n", path,
			(long long)st.st_size);
		exit(1);
	}
	buf = malloc((size_t)st.st_size);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		die(path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* The last bytes of each connection's input that may begin a head's end
 * ("\r\n\r\n" split across two reads), by fd. */
static char tail[MAX_FDS][4];

/* Answer every complete head in fd's input; -1: close it. */
static int serve(int fd, const struct iovec *answer)
{
	static char in[4096];
	size_t kept = strlen(tail[fd]), total = answer[0].iov_len + answer[1].iov_len, len;
	struct msghdr msg = { .msg_iov = (struct iovec *)answer, .msg_iovlen = 2 };
	ssize_t n;
	char *p, *rest;

	memcpy(in, tail[fd], kept);
	n = recv(fd, in + kept, sizeof(in) - 1 - kept, MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 && errno == EAGAIN ? 0 : -1;
	len = kept + (size_t)n;
	in[len] = '\0';
	for (p = rest = in; (p = strstr(p, "\r\n\r\n")); rest = p += 4) {
		/* a blocking socket: the whole answer goes before the next */
		if (sendmsg(fd, &msg, MSG_NOSIGNAL) != (ssize_t)total)
			return -1;
	}
	len -= (size_t)(rest - in);
	strcpy(tail[fd], rest + (len > 3 ? len - 3 : 0));
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { 0 };
	struct epoll_event ev = { .events = EPOLLIN }, evs[MAX_CONNS];
	struct sigaction act = { .sa_handler = on_signal };
	struct iovec answer[2];
	sigset_t stops, open_mask;
	char head[160];
	int lfd, ep, one = 1;
	size_t blen;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-serve ADDR:PORT FILE\n");
		return 2;
	}
	if (!ipv4_port("bench-serve", argv[1], &sa))
		return 2;
	answer[1].iov_base = slurp(argv[2], &blen);
	answer[1].iov_len = blen;
	answer[0].iov_base = head;
	answer[0].iov_len =
		(size_t)snprintf(head, sizeof(head),
				 "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
				 "version=0.0.4; charset=utf-8\r\nContent-Length: %zu\r\n\r\n",
				 blen);
	/* blocked but while epoll_pwait sleeps: a signal between the test
	 * of stop and the sleep is not lost */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &open_mask);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 16))
		die("listen");
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		die("epoll");
	while (!stop) {
		int n = epoll_pwait(ep, evs, MAX_CONNS, -1, &open_mask);

		if (n < 0 && errno != EINTR)
			die("epoll_pwait");
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				/* blocking: each answer is sent whole */
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				if (c < 0 &&
				    (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED))
					continue;
				if (c < 0)
					die("accept4");
				ev.data.fd = c;
				if (c >= MAX_FDS || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev)) {
					close(c);
					continue;
				}
				tail[c][0] = '\0';
			} else if (serve(fd, answer)) {
				close(fd); /* leaves the epoll set with its last reference */
			}
		}
	}
	return 0;
}
