// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop's dispatch (lib/util/loop.c) on real pipes: each readable fd
 * calls its own source's handler, found by the pointer in the epoll data;
 * a handler's stop or error ends the loop with 0 or that error; a source
 * unwatched is called no more.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"
#include "unit.h"

struct owner {
	int calls_a, calls_b;
	int stop_after; /* a's handler says stop at this call */
	int fail_b;	/* b's handler fails with this (0: no) */
	int pa[2], pb[2];
	struct tls_source a, b;
};

static int on_a(struct tls_source *s)
{
	struct owner *o = tls_container_of(s, struct owner, a);
	char c;

	assert_int_equal(read(o->pa[0], &c, 1), 1);
	o->calls_a++;
	return o->calls_a == o->stop_after ? TLS_LOOP_STOP : 0;
}

static int on_b(struct tls_source *s)
{
	struct owner *o = tls_container_of(s, struct owner, b);
	char c;

	assert_int_equal(read(o->pb[0], &c, 1), 1);
	o->calls_b++;
	return o->fail_b;
}

static int setup(struct owner *o, int *epfd)
{
	*epfd = epoll_create1(0);
	assert_true(*epfd >= 0);
	assert_int_equal(pipe(o->pa), 0);
	assert_int_equal(pipe(o->pb), 0);
	tls_source_init(&o->a, on_a);
	tls_source_init(&o->b, on_b);
	assert_int_equal(o->a.fd, -1);
	assert_int_equal(tls_loop_watch(*epfd, &o->a, o->pa[0]), 0);
	assert_int_equal(tls_loop_watch(*epfd, &o->b, o->pb[0]), 0);
	assert_int_equal(o->a.fd, o->pa[0]);
	return 0;
}

static void teardown(struct owner *o, int epfd)
{
	close(o->pa[0]);
	close(o->pa[1]);
	close(o->pb[0]);
	close(o->pb[1]);
	close(epfd);
}

static void test_dispatch_and_stop(void **state)
{
	struct owner o = { .stop_after = 3 };
	int epfd;

	(void)state;
	setup(&o, &epfd);
	/* b once, a three times: each to its own handler; a's third stops */
	assert_int_equal(write(o.pb[1], "x", 1), 1);
	assert_int_equal(write(o.pa[1], "xxx", 3), 3);
	assert_int_equal(tls_loop_run(epfd), 0);
	assert_int_equal(o.calls_a, 3);
	assert_int_equal(o.calls_b, 1);
	teardown(&o, epfd);
}

static void test_error_and_unwatch(void **state)
{
	struct owner o = { .stop_after = 1, .fail_b = -EPROTO };
	int epfd;

	(void)state;
	setup(&o, &epfd);
	assert_int_equal(write(o.pb[1], "x", 1), 1);
	assert_int_equal(tls_loop_run(epfd), -EPROTO);
	assert_int_equal(o.calls_b, 1);
	/* b unwatched: its data waits unread, a's stop ends the loop */
	tls_loop_unwatch(epfd, &o.b);
	assert_int_equal(o.b.fd, -1);
	assert_int_equal(write(o.pb[1], "y", 1), 1);
	assert_int_equal(write(o.pa[1], "x", 1), 1);
	assert_int_equal(tls_loop_run(epfd), 0);
	assert_int_equal(o.calls_b, 1);
	assert_int_equal(o.calls_a, 1);
	/* a bad fd is refused with its errno */
	assert_int_equal(tls_loop_watch(epfd, &o.b, -1), -EBADF);
	teardown(&o, epfd);
}

/* A handler that replaces another source's fd, as a reload does (a new
 * control socket path): the old fd closed (and forgotten), the new one
 * watched for the same source, which then gets the new fd's events only. */
static int epfd_of_swap = -1;

static int on_swap_a(struct tls_source *s)
{
	struct owner *o = tls_container_of(s, struct owner, a);
	char c;

	assert_int_equal(read(o->pa[0], &c, 1), 1);
	o->calls_a++;
	close(o->pb[0]);
	close(o->pb[1]);
	tls_loop_forget(&o->b);
	assert_int_equal(o->b.fd, -1);
	assert_int_equal(pipe(o->pb), 0);
	assert_int_equal(tls_loop_watch(epfd_of_swap, &o->b, o->pb[0]), 0);
	assert_int_equal(write(o->pb[1], "n", 1), 1);
	return 0;
}

static int on_swap_b(struct tls_source *s)
{
	struct owner *o = tls_container_of(s, struct owner, b);
	char c;

	/* the new pipe's byte, through the same source */
	assert_int_equal(s->fd, o->pb[0]);
	assert_int_equal(read(o->pb[0], &c, 1), 1);
	assert_int_equal(c, 'n');
	o->calls_b++;
	return TLS_LOOP_STOP;
}

static void test_swap_fd(void **state)
{
	struct owner o = {};
	int epfd;

	(void)state;
	setup(&o, &epfd);
	epfd_of_swap = epfd;
	o.a.fn = on_swap_a;
	o.b.fn = on_swap_b;
	assert_int_equal(write(o.pa[1], "x", 1), 1);
	assert_int_equal(tls_loop_run(epfd), 0);
	assert_int_equal(o.calls_a, 1);
	assert_int_equal(o.calls_b, 1);
	teardown(&o, epfd);
}

int run_loop_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dispatch_and_stop),
		cmocka_unit_test(test_error_and_unwatch),
		cmocka_unit_test(test_swap_fd),
	};

	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
