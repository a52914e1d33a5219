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

/* CLOCK_MONOTONIC in ns: the servers' deadlines and idle times. */
uint64_t tls_mono_ns(void);

/*
 * Send buf[*off..len) without blocking (no SIGPIPE), *off advanced past
 * what went: 1 when all of it is out, 0 when the socket is full (wait for
 * EPOLLOUT), -1 when the peer is gone.
 */
int tls_send_some(int fd, const char *buf, size_t len, size_t *off);

/* The same for a[0..alen) then b[0..blen), *off counting through both:
 * one sendmsg for the two, so that a head and its body need not be copied
 * together (nor the head go out in a segment of its own). */
int tls_send_two(int fd, const char *a, size_t alen, const char *b, size_t blen, size_t *off);

#endif /* TLS_NBIO_H */
