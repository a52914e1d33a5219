// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: a sock_diag dump's reply (tcd/sockdiag.c), raw bytes
 * as one recv() of tls_diag_dump's loop would give them (netlink headers,
 * inet_diag_msg and its attributes, NLMSG_DONE, NLMSG_ERROR), through
 * tls_diag_parse: libmnl's checks of the headers, then tlsd's reading of
 * each message. Seeds: replies captured on loopback
 * (tests/fuzz/capture-sockdiag.py).
 *
 * Each input is parsed twice: for a request of any sequence number and
 * port (0, 0), and for the one its first header names, as a real reply
 * to tlsd's own request would carry.
 *
 * Beyond the sanitizers: no more sockets come out than whole messages fit
 * in the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>

#include "sockdiag.h"

static void on_sock(const struct tls_sock *s, void *ctx)
{
	unsigned int *n = ctx;

	(void)s;
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t most = size / (MNL_NLMSG_HDRLEN + sizeof(struct inet_diag_msg));
	unsigned int n = 0;
	struct nlmsghdr h;
	void *buf;

	/* An exact-size copy, aligned as recv()'s buffer is: a read past
	 * the reply is caught. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	tls_diag_parse(buf, size, 0, 0, on_sock, &n);
	if (n > most)
		abort();
	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		n = 0;
		tls_diag_parse(buf, size, h.nlmsg_seq, h.nlmsg_pid, on_sock, &n);
		if (n > most)
			abort();
	}
	free(buf);
	return 0;
}
