// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reader threads of proc_reader.h.
 *
 * One reader thread at a time serves the loop, through a mailbox: the loop
 * posts a request and waits (a condition variable, with a deadline on
 * CLOCK_MONOTONIC) for the answer; the reader sleeps on its own condition
 * variable between requests. Not a thread per request: discovery reads
 * every trusted process it judges (a full rescan judges each of root's
 * processes again), and a thread made and reaped for each read would cost
 * more than the read; a waiting reader costs two wakeups. A new thread is
 * made only after a read was late.
 *
 * Ownership: a reader owns its buffers. The loop reads them only once the
 * reader answered and until its next request (the reader is idle then). An
 * abandoned reader is in `stuck` until its read returns; it then takes
 * itself out, frees its buffers and exits. Everything shared is under
 * `lock`; nobody holds it across a read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proc_reader.h"
#include "procfs.h"

/* A reader blocked in a read holds its stack: it needs little (an open, a
 * read, a realloc), so not glibc's default 8 MiB of address space. Room
 * for the sanitizers' larger frames in the unit tests. */
#define READER_STACK (256u << 10)

struct reader {
	pthread_t thread;
	pthread_cond_t wake; /* a request is posted */
	bool posted;	     /* a request is in; the reader clears it when done */
	bool done;	     /* its answer is in, for the loop */
	bool abandoned;	     /* late: frees itself when its read returns */
	struct tls_pread req;
	char *buf[TLS_PREAD_FILES];
	size_t cap[TLS_PREAD_FILES];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t answered; /* on CLOCK_MONOTONIC: see init() */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;
static struct reader *cur; /* serves the next request; NULL: none yet */
static struct reader *stuck[TLS_PREAD_STUCK_MAX];
static unsigned int nstuck;

static void free_buffers(struct reader *r)
{
	unsigned int i;

	for (i = 0; i < TLS_PREAD_FILES; i++)
		free(r->buf[i]);
}

static void unstick(struct reader *r)
{
	unsigned int i;

	for (i = 0; i < nstuck; i++)
		if (stuck[i] == r) {
			stuck[i] = stuck[--nstuck];
			return;
		}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (;;) {
		while (!r->posted)
			pthread_cond_wait(&r->wake, &lock);
		pthread_mutex_unlock(&lock);
		/* the loop does not touch req or the buffers meanwhile */
		for (i = 0; i < r->req.nfiles; i++)
			r->req.len[i] = tls_file_read_all(r->req.path[i], &r->buf[i], &r->cap[i],
							  r->req.max[i]);
		pthread_mutex_lock(&lock);
		r->posted = false;
		if (r->abandoned)
			break;
		r->done = true;
		pthread_cond_signal(&answered);
	}
	unstick(r);
	pthread_mutex_unlock(&lock);
	free_buffers(r);
	pthread_cond_destroy(&r->wake);
	free(r);
	return NULL;
}

/* A new reader as cur; under lock. */
static int start_reader(void)
{
	struct reader *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (!r)
		return -ENOMEM;
	err = pthread_cond_init(&r->wake, NULL);
	if (err) {
		free(r);
		return -err;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, READER_STACK);
	/* Signals are the loop's (its signalfd): a reader takes none. It
	 * inherits this mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, &attr, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_cond_destroy(&r->wake);
		free(r);
		return -err;
	}
	cur = r;
	return 0;
}

/*
 * fork() (daemon(), the kernel feature probes) copies only the forking
 * thread, the loop: the child has the readers' memory but not their
 * threads. `lock` is held across the fork so that the child's copy is
 * consistent. cur was idle (the loop, which forks, is not waiting for it):
 * its memory is freed. A stuck reader may have been inside realloc() of
 * its buffers: they are left alone (a leak in the child, once).
 */
static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
	/* no pthread_cond_destroy: its waiter was a thread of the parent */
	if (cur) {
		free_buffers(cur);
		free(cur);
	}
	cur = NULL;
	nstuck = 0;
	pthread_mutex_unlock(&lock);
}

static void init(void)
{
	pthread_condattr_t attr;

	init_err = pthread_condattr_init(&attr);
	if (init_err)
		return;
	/* deadlines on the monotonic clock: a clock step must not stretch
	 * the loop's wait */
	init_err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!init_err)
		init_err = pthread_cond_init(&answered, &attr);
	pthread_condattr_destroy(&attr);
	if (!init_err)
		init_err = pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static bool is_stuck(pid_t pid)
{
	unsigned int i;

	for (i = 0; i < nstuck; i++)
		if (stuck[i]->req.pid == pid)
			return true;
	return false;
}

static struct timespec deadline(uint64_t wait_ns)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_nsec + wait_ns;
	ts.tv_sec += ns / 1000000000ULL;
	ts.tv_nsec = ns % 1000000000ULL;
	return ts;
}

/* Post q to cur and wait for its answer until dl; under lock. */
static int ask(struct tls_pread *q, const struct timespec *dl)
{
	struct reader *r = cur;
	unsigned int i;
	int err = 0;

	r->req = *q;
	r->done = false;
	r->posted = true;
	pthread_cond_signal(&r->wake);
	while (!r->done && !err)
		err = pthread_cond_timedwait(&answered, &lock, dl);
	if (!r->done) {
		/* late: its thread finishes alone; the next request gets a
		 * new one */
		r->abandoned = true;
		stuck[nstuck++] = r;
		cur = NULL;
		return -ETIMEDOUT;
	}
	r->done = false;
	for (i = 0; i < q->nfiles; i++) {
		q->len[i] = r->req.len[i];
		q->buf[i] = r->buf[i];
	}
	return 0;
}

int tls_pread(struct tls_pread *q, uint64_t wait_ns)
{
	struct timespec dl;
	int err = 0;

	if (q->nfiles > TLS_PREAD_FILES || !wait_ns)
		return -EINVAL;
	pthread_once(&once, init);
	if (init_err)
		return -init_err;
	dl = deadline(wait_ns);
	pthread_mutex_lock(&lock);
	if (is_stuck(q->pid))
		err = -EBUSY;
	else if (nstuck >= TLS_PREAD_STUCK_MAX)
		err = -ENOSPC;
	else if (!cur)
		err = start_reader();
	if (!err)
		err = ask(q, &dl);
	pthread_mutex_unlock(&lock);
	return err;
}

unsigned int tls_pread_stuck(pid_t *pids, unsigned int max)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nstuck && n < max; i++)
		pids[n++] = stuck[i]->req.pid;
	pthread_mutex_unlock(&lock);
	return n;
}
