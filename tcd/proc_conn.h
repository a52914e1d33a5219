/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Process exec events from the kernel's proc connector (NETLINK_CONNECTOR,
 * CN_IDX_PROC) through libmnl. Kernels from 6.6 on filter by event type in
 * the kernel, so a busy host's forks and exits do not even wake tlsd; older
 * ones send everything and the reader drops what it does not need.
 */
#ifndef TLS_PROC_CONN_H
#define TLS_PROC_CONN_H

#include <sys/types.h>

struct tls_pconn;

int tls_pconn_open(struct tls_pconn **out);
/* Open the socket now, in the current network namespace, for a later
 * tls_pconn_open() to use (tlsd --netns: before it leaves the initial
 * namespace, the only one the kernel sends proc events to). Closing it then
 * only unsubscribes, so that a later open can subscribe again. */
int tls_pconn_preopen(void);
void tls_pconn_close(struct tls_pconn *p);
/* Open and close it once, recording the proc connector and its filter in
 * the kernel features (--probe; discovery records its own as it opens). */
void tls_pconn_probe(void);
int tls_pconn_fd(const struct tls_pconn *p);

typedef void (*tls_exec_cb)(pid_t tgid, void *ctx);
/* Read every pending event, calling cb for each exec. -ENOBUFS: events were
 * lost (the socket overflowed), the caller should rescan. */
int tls_pconn_read(struct tls_pconn *p, tls_exec_cb cb, void *ctx);

#endif /* TLS_PROC_CONN_H */
