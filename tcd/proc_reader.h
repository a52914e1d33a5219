/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reads that may block for good, off the loop thread, with a deadline.
 *
 * A read of /proc/PID/cmdline or /proc/PID/environ goes through the
 * process's memory (access_remote_vm, under its mmap lock): it blocks while
 * another task holds that lock for long, or while a page of it is a file
 * whose FUSE server does not answer; for seconds, or for good. tlsd's loop
 * is one thread, and everything else it does (the control socket, the
 * rotation, healing the tree) waits meanwhile. So discovery hands these
 * reads to a reader thread and waits for the answer at most a deadline.
 *
 * A read that is late is abandoned, not cancelled (nothing can cancel a
 * thread inside the kernel's read): its thread finishes it alone, frees
 * its own buffers and exits, and the next request gets a new thread. At
 * most TLS_PREAD_STUCK_MAX abandoned reads live at once (each holds a
 * thread and its buffers); past that, and for a pid whose last read is
 * still stuck, requests are refused at once, without waiting.
 *
 * To be called from one thread (the loop) only. The state is the
 * process's, not a caller's: an abandoned read outlives whoever asked.
 */
#ifndef TLS_PROC_READER_H
#define TLS_PROC_READER_H

#include <stdint.h>
#include <sys/types.h>

#define TLS_PREAD_FILES	    2
#define TLS_PREAD_PATH_MAX  64
#define TLS_PREAD_STUCK_MAX 4

struct tls_pread {
	/* in: whose files (a stuck read is named by its pid, and a pid whose
	 * read is stuck is not read again until that one returns), and the
	 * files, each read whole up to its max as tls_file_read_all does */
	pid_t pid;
	unsigned int nfiles;
	char path[TLS_PREAD_FILES][TLS_PREAD_PATH_MAX];
	size_t max[TLS_PREAD_FILES];
	/* out, when tls_pread returns 0: each file's length or -errno, and
	 * its bytes (NUL-terminated), valid until the next tls_pread */
	ssize_t len[TLS_PREAD_FILES];
	const char *buf[TLS_PREAD_FILES];
};

/*
 * Read q's files, waiting at most wait_ns. 0: read (each file's result in
 * q->len); -ETIMEDOUT: late, abandoned; -EBUSY: refused, this pid's last
 * read is still stuck; -ENOSPC: refused, TLS_PREAD_STUCK_MAX reads are
 * stuck; -EINVAL: wait_ns is 0 or too many files, nothing asked; another
 * -errno: no reader thread could be started.
 */
int tls_pread(struct tls_pread *q, uint64_t wait_ns);
/* The pids whose reads are stuck (at most max of them); how many. */
unsigned int tls_pread_stuck(pid_t *pids, unsigned int max);

#endif /* TLS_PROC_READER_H */
