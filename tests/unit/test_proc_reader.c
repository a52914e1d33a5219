// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc reader threads (tcd/proc_reader.c): files are read whole off
 * the caller's thread; a read that blocks (here the open of a FIFO with no
 * writer, as a read of a stalled process's memory blocks) is abandoned at
 * the deadline, refused at once while it stays stuck, and cleans up after
 * itself when it returns; four stuck reads refuse every request; a fork's
 * child has readers of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc_reader.h"
#include "unit.h"

#define MS 1000000ULL

static char dir[32]; /* /tmp/tls-pread.XXXXXX: paths fit TLS_PREAD_PATH_MAX */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* dir/name, made: a file holding len bytes of data, or a FIFO (data NULL) */
static void make(char *path, const char *name, const char *data, size_t len)
{
	snprintf(path, TLS_PREAD_PATH_MAX, "%s/%s", dir, name);
	if (!data) {
		assert_int_equal(mkfifo(path, 0600), 0);
	} else {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, len, f), len);
		fclose(f);
	}
}

/* A request for one file of pid's, read whole up to max bytes */
static struct tls_pread one(pid_t pid, const char *path, size_t max)
{
	struct tls_pread q = { .pid = pid, .nfiles = 1, .max = { max } };

	snprintf(q.path[0], sizeof(q.path[0]), "%s", path);
	return q;
}

/* The blocked reader of FIFO path let go: a writer comes and goes, its
 * open returns, its read finds the end. Until the reader is in its open, a
 * writer cannot come (ENXIO): tried again. */
static void release(const char *path)
{
	int i, fd = -1;

	for (i = 0; i < 500 && fd < 0; i++) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			assert_int_equal(errno, ENXIO);
			usleep(10000);
		}
	}
	assert_true(fd >= 0);
	close(fd);
}

/* Wait (5 s at most) until no read is stuck. */
static void wait_unstuck(void)
{
	pid_t pids[TLS_PREAD_STUCK_MAX];
	int i;

	for (i = 0; i < 500 && tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX); i++)
		usleep(10000);
	assert_int_equal(tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tls-pread.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void test_reads_whole(void **state)
{
	struct tls_pread q = { .pid = 1001, .nfiles = 2, .max = { 1 << 20, 8 } };
	char big[10000];

	(void)state;
	memset(big, 'x', sizeof(big));
	memcpy(big, "A=1\0B=2\0", 8);
	make(q.path[0], "whole", big, sizeof(big));
	make(q.path[1], "cut", "0123456789", 10);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
	/* past the first 4 KiB buffer, and its NULs kept */
	assert_int_equal(q.len[0], sizeof(big));
	assert_memory_equal(q.buf[0], big, sizeof(big));
	assert_int_equal(q.buf[0][q.len[0]], '\0');
	/* cut at max - 1, NUL-terminated */
	assert_int_equal(q.len[1], 7);
	assert_string_equal(q.buf[1], "0123456");
	/* a file that is not there: its errno, the other still read */
	snprintf(q.path[1], sizeof(q.path[1]), "%s/none", dir);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
	assert_int_equal(q.len[0], sizeof(big));
	assert_int_equal(q.len[1], -ENOENT);
	/* no wait: nothing asked */
	assert_int_equal(tls_pread(&q, 0), -EINVAL);
}

static void test_late_read(void **state)
{
	char fifo[TLS_PREAD_PATH_MAX], file[TLS_PREAD_PATH_MAX];
	struct tls_pread q;
	pid_t pids[TLS_PREAD_STUCK_MAX];
	uint64_t t0, took;

	(void)state;
	make(fifo, "late", NULL, 0);
	make(file, "ok", "ok", 2);
	q = one(2001, fifo, 4096);
	t0 = mono_ns();
	assert_int_equal(tls_pread(&q, 50 * MS), -ETIMEDOUT);
	took = mono_ns() - t0;
	assert_true(took >= 50 * MS && took < 2000 * MS);
	assert_int_equal(tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX), 1);
	assert_int_equal(pids[0], 2001);
	/* the same pid again: refused at once, not waited for */
	q = one(2001, file, 4096);
	t0 = mono_ns();
	assert_int_equal(tls_pread(&q, 1000 * MS), -EBUSY);
	assert_true(mono_ns() - t0 < 50 * MS);
	/* another pid: a new reader answers */
	q = one(2002, file, 4096);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
	assert_int_equal(q.len[0], 2);
	assert_string_equal(q.buf[0], "ok");
	/* the stuck read returns: its reader frees itself, the pid is read
	 * again */
	release(fifo);
	wait_unstuck();
	q = one(2001, file, 4096);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
	assert_string_equal(q.buf[0], "ok");
}

static void test_stuck_bound(void **state)
{
	char fifo[TLS_PREAD_STUCK_MAX][TLS_PREAD_PATH_MAX], file[TLS_PREAD_PATH_MAX];
	pid_t pids[TLS_PREAD_STUCK_MAX + 1];
	struct tls_pread q;
	unsigned int i, n;
	uint64_t t0;

	(void)state;
	make(file, "bound-ok", "ok", 2);
	for (i = 0; i < TLS_PREAD_STUCK_MAX; i++) {
		char name[8];

		snprintf(name, sizeof(name), "stuck%u", i);
		make(fifo[i], name, NULL, 0);
		q = one(3000 + i, fifo[i], 4096);
		assert_int_equal(tls_pread(&q, 20 * MS), -ETIMEDOUT);
	}
	n = tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX + 1);
	assert_int_equal(n, TLS_PREAD_STUCK_MAX);
	for (i = 0; i < n; i++)
		assert_true(pids[i] >= 3000 && pids[i] < 3000 + TLS_PREAD_STUCK_MAX);
	/* the bound: every request refused at once */
	q = one(3100, file, 4096);
	t0 = mono_ns();
	assert_int_equal(tls_pread(&q, 1000 * MS), -ENOSPC);
	assert_true(mono_ns() - t0 < 50 * MS);
	/* one returns: requests are served again */
	release(fifo[0]);
	for (i = 0; i < 500 && tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX) == n; i++)
		usleep(10000);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
	for (i = 1; i < TLS_PREAD_STUCK_MAX; i++)
		release(fifo[i]);
	wait_unstuck();
}

/* daemon() forks after discovery's first rescan: the child has no reader
 * thread but the parent's memory of one, and must start its own. */
static void test_fork(void **state)
{
	char file[TLS_PREAD_PATH_MAX];
	struct tls_pread q;
	int status;
	pid_t child;

	(void)state;
	make(file, "fork", "ok", 2);
	q = one(4001, file, 4096);
	assert_int_equal(tls_pread(&q, 1000 * MS), 0); /* a reader now */
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		q = one(4002, file, 4096);
		_exit(tls_pread(&q, 1000 * MS) == 0 && q.len[0] == 2 ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* and the parent's still serves */
	assert_int_equal(tls_pread(&q, 1000 * MS), 0);
}

int run_proc_reader_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_whole),
		cmocka_unit_test(test_late_read),
		cmocka_unit_test(test_stuck_bound),
		cmocka_unit_test(test_fork),
	};

	return cmocka_run_group_tests_name("proc_reader", tests, setup, teardown);
}
