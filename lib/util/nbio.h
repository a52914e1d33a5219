/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the daemon's two servers (the control socket, ctl.c, and the metrics
 * endpoint, http.c) share to serve clients from the epoll loop without ever
 * blocking it.
 */
#ifndef TLS_NBIO_H
#define TLS_NBIO_H

#include <stddef.h>
#include <stdint.h>

/* A piece of an answer: len bytes at buf. */
struct tls_piece {
	const char *buf;
	size_t len;
};

/*
 * Send pieces p[0..n) in order without blocking (no SIGPIPE), from *off on
 * (counted through all of them), *off advanced past what went: 1 when all
 * of it is out, 0 when the socket is full (wait for EPOLLOUT), -1 when the
 * peer is gone. One sendmsg takes several pieces, so that an answer made of
 * a head, text of its own and text kept for many answers (the metrics'
 * blocks) need not be copied together first, nor go out in small segments.
 */
int tls_send_pieces(int fd, const struct tls_piece *p, size_t n, size_t *off);

/* The same for buf[0..len). */
int tls_send_some(int fd, const char *buf, size_t len, size_t *off);

#endif /* TLS_NBIO_H */
