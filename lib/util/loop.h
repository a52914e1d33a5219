/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An epoll loop whose sources are handlers: each watched fd carries, in
 * its epoll data, a pointer to the struct tls_source its owner embeds, so
 * that one wakeup calls one function and the loop knows no source by name
 * (no `if fd == ...` chain). The owner keeps the struct alive as long as the
 * fd is watched (embedding it in the owner's state does).
 */
#ifndef TLS_LOOP_H
#define TLS_LOOP_H

#include <stddef.h>

#define tls_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

struct tls_source;
/* 0: go on; TLS_LOOP_STOP: tls_loop_run returns 0; < 0: it returns that. */
typedef int (*tls_source_fn)(struct tls_source *s);
#define TLS_LOOP_STOP 1

struct tls_source {
	int fd; /* the fd watched, -1: none */
	tls_source_fn fn;
};

/* A source that watches nothing yet. */
void tls_source_init(struct tls_source *s, tls_source_fn fn);
/* Watch fd (readable) for s: 0 or -errno. A source watches one fd; a new
 * one replaces the old in s->fd (the old leaves the epoll when it closes,
 * or by tls_loop_unwatch before). */
int tls_loop_watch(int epfd, struct tls_source *s, int fd);
/* Stop watching s's fd (it stays open). */
void tls_loop_unwatch(int epfd, struct tls_source *s);
/* Its owner closed s's fd (which took it out of the epoll): forget the
 * number, which the next open may reuse for something else. */
void tls_loop_forget(struct tls_source *s);
/* Wait and dispatch, one event at a time (a handler may close another
 * source's fd: no event of it is still in hand), until a handler says stop
 * (0) or fails (its negative errno), or epoll_wait fails (-errno). */
int tls_loop_run(int epfd);

#endif
