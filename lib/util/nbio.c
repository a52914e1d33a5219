// SPDX-License-Identifier: GPL-2.0-only
/* Non-blocking I/O shared by the servers: nbio.h. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "nbio.h"

/* iovecs per sendmsg: an answer has a few pieces (more go in the next) */
#define MAX_IOV 8

int tls_send_pieces(int fd, const struct tls_piece *p, size_t n, size_t *off)
{
	for (;;) {
		struct iovec iov[MAX_IOV];
		struct msghdr mh = { .msg_iov = iov };
		size_t i = 0, skip = *off;
		ssize_t sent;

		while (i < n && skip >= p[i].len)
			skip -= p[i++].len;
		if (i == n)
			return 1;
		for (; i < n && mh.msg_iovlen < MAX_IOV; i++, skip = 0)
			if (p[i].len > skip)
				iov[mh.msg_iovlen++] =
					(struct iovec){ (char *)p[i].buf + skip, p[i].len - skip };
		while (i < n && !p[i].len)
			i++;
		/* pieces left for the next call: no short segment at the cut */
		sent = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT | (i < n ? MSG_MORE : 0));
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (sent <= 0)
			return -1;
		*off += (size_t)sent;
	}
}

int tls_send_some(int fd, const char *buf, size_t len, size_t *off)
{
	const struct tls_piece p = { buf, len };

	return tls_send_pieces(fd, &p, 1, off);
}
