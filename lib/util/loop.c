// SPDX-License-Identifier: GPL-2.0-only
/* See loop.h. */
#include <errno.h>
#include <sys/epoll.h>

#include "loop.h"

void tls_source_init(struct tls_source *s, tls_source_fn fn)
{
	s->fd = -1;
	s->fn = fn;
}

int tls_loop_watch(int epfd, struct tls_source *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	s->fd = fd;
	return 0;
}

void tls_loop_unwatch(int epfd, struct tls_source *s)
{
	if (s->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL);
	s->fd = -1;
}

void tls_loop_forget(struct tls_source *s)
{
	s->fd = -1;
}

int tls_loop_run(int epfd)
{
	for (;;) {
		struct epoll_event ev;
		struct tls_source *s;
		int n = epoll_wait(epfd, &ev, 1, -1), r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			continue;
		s = ev.data.ptr;
		r = s->fn(s);
		if (r == TLS_LOOP_STOP)
			return 0;
		if (r < 0)
			return r;
	}
}
