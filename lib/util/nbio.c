// SPDX-License-Identifier: GPL-2.0-only
/* Non-blocking I/O shared by the servers: nbio.h. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "nbio.h"

uint64_t tls_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int tls_send_two(int fd, const char *a, size_t alen, const char *b, size_t blen, size_t *off)
{
	while (*off < alen + blen) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		size_t o = *off;
		ssize_t n;

		if (o < alen) {
			iov[mh.msg_iovlen++] = (struct iovec){ (char *)a + o, alen - o };
			o = 0;
		} else {
			o -= alen;
		}
		if (o < blen)
			iov[mh.msg_iovlen++] = (struct iovec){ (char *)b + o, blen - o };
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		*off += (size_t)n;
	}
	return 1;
}

int tls_send_some(int fd, const char *buf, size_t len, size_t *off)
{
	return tls_send_two(fd, buf, len, NULL, 0, off);
}
