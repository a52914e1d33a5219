// SPDX-License-Identifier: GPL-2.0-only
/*
 * The servers' sending (tcd/nbio.c): an answer in pieces, more of them than
 * one sendmsg takes, empty ones among them, arrives whole and in order
 * through a socket too small to take it at once (resumed where it stopped,
 * as the servers do on EPOLLOUT); and a peer that is gone is said.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "nbio.h"
#include "unit.h"

#define BIG    (300 * 1000)
#define NPIECE 12

static void test_send_pieces(void **state)
{
	char *big = malloc(BIG), *want = malloc(2 * BIG), *got = malloc(2 * BIG);
	int sv[2], small = 4096, ret;
	size_t off = 0, wlen = 0, glen = 0, stops = 0;
	struct tls_piece p[NPIECE];

	(void)state;
	assert_non_null(big);
	assert_non_null(want);
	assert_non_null(got);
	/* byte i = i * 7 mod 251: no period that a piece sent twice or out
	 * of place could hide in */
	for (size_t i = 0; i < BIG; i++)
		big[i] = (char)(i * 7 % 251);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	/* a head, big pieces, small ones, empty ones: more than one
	 * sendmsg's iovecs */
	p[0] = (struct tls_piece){ "HEAD\r\n\r\n", 8 };
	p[1] = (struct tls_piece){ big + 1000, BIG - 2000 };
	p[2] = (struct tls_piece){ "middle text\n", 12 };
	p[3] = (struct tls_piece){ big, 777 };
	p[4] = (struct tls_piece){ "", 0 };
	for (size_t i = 5; i < NPIECE - 2; i++)
		p[i] = (struct tls_piece){ big + i * 10, i };
	p[NPIECE - 2] = (struct tls_piece){ big, BIG };
	p[NPIECE - 1] = (struct tls_piece){ "# EOF\n", 6 };
	for (size_t i = 0; i < NPIECE; i++) {
		memcpy(want + wlen, p[i].buf, p[i].len);
		wlen += p[i].len;
	}
	while ((ret = tls_send_pieces(sv[0], p, NPIECE, &off)) == 0) {
		ssize_t n;

		/* the socket is full: the client reads a little, the server
		 * goes on where it stopped */
		stops++;
		assert_true(off < wlen);
		n = read(sv[1], got + glen, 50000);
		assert_true(n > 0);
		glen += (size_t)n;
	}
	assert_int_equal(ret, 1);
	assert_int_equal(off, wlen);
	assert_true(stops > 2);
	for (;;) {
		ssize_t n = read(sv[1], got + glen, 2 * BIG - glen);

		if (n <= 0)
			break;
		glen += (size_t)n;
	}
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
	/* all out: nothing more is sent */
	assert_int_equal(tls_send_pieces(sv[0], p, NPIECE, &off), 1);
	assert_int_equal(off, wlen);
	/* the peer gone: -1 (and no SIGPIPE, which would end this test) */
	close(sv[1]);
	off = 0;
	assert_int_equal(tls_send_pieces(sv[0], p, NPIECE, &off), -1);
	close(sv[0]);
	free(big);
	free(want);
	free(got);
}

int run_nbio_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_pieces),
	};

	return cmocka_run_group_tests_name("nbio", tests, NULL, NULL);
}
