/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's own state, kept beside its instance's lock in a file of its
 * own (/run/tlsd/IFACE@NETNS.state), not in BPF maps the programs never
 * read: a change to it is then no change of the pin layout. It holds what a
 * start after a crash, and `tlsd --cleanup`, need and the kernel does not
 * say: the root qdisc to put back at exit (the netlink request, byte for
 * byte) and the jobs' ids by name (a takeover gives each job the id its
 * counters and sockets carry).
 *
 * JSON, versioned:
 *
 *   {"format": "tlsd-state", "version": 1, "instance": "eth0@4026531840",
 *    "saved_qdisc": "2c000000240005...",      (hex; "": the kernel's default)
 *    "jobs": [{"id": 1, "name": "a"}, ...]}
 *
 * Written whole, atomically (a temporary file in the same directory,
 * fsync, rename), mode 0600; read with a size bound and checked field by
 * field: the file is input like any other, and a bad one is an error that
 * names the field, never a guess. Encoding and decoding are pure (tested in
 * tests/unit/test_state_file.c).
 */
#ifndef TLS_STATE_FILE_H
#define TLS_STATE_FILE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "tls_common.h"

#define TLS_STATE_FILE_FORMAT  "tlsd-state"
#define TLS_STATE_FILE_VERSION 1
/* The file's bound: every job (1023 names of 63 bytes, about 90 kB) and
 * the largest request (32 kB in hex) fit in half of it. */
#define TLS_STATE_FILE_MAX (256 * 1024)
/* The saved root qdisc request's bound. The map of pin layouts 1 and 2 held
 * 2 kB, less than a tbf's request (its rate table alone is 1 kB): such a
 * qdisc was put back at exit but lost to a crash. */
#define TLS_SAVED_QDISC_MAX 16384

struct tls_state_job {
	uint32_t id; /* 1..TLS_MAX_JOBS-1 */
	char name[TLS_JOB_NAME_LEN];
};

struct tls_state_file {
	char instance[IF_NAMESIZE + 32]; /* tls_instance_name() */
	/* the root qdisc before tlsd, as the request that puts it back; 0:
	 * the kernel's default (or nothing replaced: observe mode) */
	size_t qdisc_len;
	uint8_t qdisc[TLS_SAVED_QDISC_MAX];
	unsigned int njobs;
	struct tls_state_job jobs[TLS_MAX_JOBS - 1];
};

/* Empty: no jobs, the kernel's default, instance as given. */
void tls_state_file_init(struct tls_state_file *s, const char *instance);
/* Add a job (id, name): 0, or -EINVAL / -EEXIST (id or name twice) / -ENOSPC /
 * -EILSEQ (a name that is not UTF-8: left off the record, its id is then
 * freed at a takeover, as an unnamed one). */
int tls_state_file_add_job(struct tls_state_file *s, uint32_t id, const char *name);
/* The root qdisc's request (len 0: the kernel's default): 0, or -EINVAL
 * with err saying why it is not one tlsd would send. */
int tls_state_file_set_qdisc(struct tls_state_file *s, const void *req, size_t len, char *err,
			     size_t errlen);
/* The name of job id in s, or NULL. */
const char *tls_state_file_job_name(const struct tls_state_file *s, uint32_t id);

/* The JSON text of s, NUL-terminated, malloc'd (the caller frees it):
 * 0 or -ENOMEM / -EINVAL (s itself invalid). */
int tls_state_file_encode(const struct tls_state_file *s, char **out, size_t *len);
/* Parse and check len bytes: 0, or -EINVAL (-EPROTO for a version newer
 * than this build's) with err naming the field and what is wrong with it;
 * s is then empty.
 * expect_instance: the instance the file must be of (NULL: any). */
int tls_state_file_decode(const char *buf, size_t len, const char *expect_instance,
			  struct tls_state_file *s, char *err, size_t errlen);

/* Write s to path atomically (path.tmp in the same directory, fsync,
 * rename, fsync of the directory), mode 0600: 0 or -errno, err says what
 * failed. */
int tls_state_file_write(const char *path, const struct tls_state_file *s, char *err,
			 size_t errlen);
/* Read and decode path: -ENOENT if there is none; a file that is not a
 * plain file of this process's user (root, for tlsd) with one name, is
 * larger than the bound, or does not decode: -EINVAL (-EPROTO: a newer
 * version); another -errno if it cannot be read; err says why. */
int tls_state_file_read(const char *path, const char *expect_instance, struct tls_state_file *s,
			char *err, size_t errlen);

#endif /* TLS_STATE_FILE_H */
