/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP sockets from sock_diag (NETLINK_SOCK_DIAG, INET_DIAG) through libmnl:
 * listening and connected, IPv4 and IPv6, with inode and cookie. A handle is
 * bound to one network namespace: the one it was opened in (a netlink
 * socket belongs to its creator's namespace for life).
 */
#ifndef TLS_SOCKDIAG_H
#define TLS_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tls_sock {
	uint64_t inode;
	uint64_t cookie;
	uint8_t family; /* AF_INET, AF_INET6 */
	uint8_t state;	/* TCP_LISTEN, TCP_ESTABLISHED, ... */
	uint16_t sport; /* host order */
	uint16_t dport;
	uint8_t saddr[16]; /* IPv4: the first 4 bytes */
	uint8_t daddr[16];
};

struct tls_diag;

/* netns_fd: an open /proc/PID/ns/net to query inside, or -1 for our own. */
int tls_diag_open(int netns_fd, struct tls_diag **out);
void tls_diag_close(struct tls_diag *d);

typedef void (*tls_sock_cb)(const struct tls_sock *s, void *ctx);
/* Every TCP socket listening, connecting or connected, both families;
 * listeners only if listen_only (much cheaper: the kernel then walks only
 * its listener hash). */
int tls_diag_dump(struct tls_diag *d, bool listen_only, tls_sock_cb cb, void *ctx);

/*
 * One buffer of a dump's reply, as recv() gave it (len bytes): each
 * inet_diag_msg to cb. seq and portid: the request's (0: any). libmnl's
 * MNL_CB_STOP at the dump's end (NLMSG_DONE), MNL_CB_OK when more is to
 * come, MNL_CB_ERROR with errno set for an error message or a malformed
 * buffer. Pure (tls_diag_dump's receive loop calls it), apart for the
 * fuzzer: tests/fuzz/fuzz_sockdiag.c.
 */
int tls_diag_parse(const void *buf, size_t len, unsigned int seq, unsigned int portid,
		   tls_sock_cb cb, void *ctx);

#endif /* TLS_SOCKDIAG_H */
