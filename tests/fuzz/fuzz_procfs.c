// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: what tcd/procfs.c parses of /proc, an entry of
 * /proc/PID/fd: its name (tls_proc_fd_name) and its link's target
 * (tls_proc_socket_link), the functions tls_proc_sockets calls on what
 * readdir and readlinkat give it. The command line and environment
 * /proc gives are the rules' input: fuzz_rules.c.
 *
 * Input: NAME \0 TARGET (no NUL: the same bytes as both). The name is a
 * NUL-terminated string as readdir's are; the target exactly its bytes,
 * unterminated, as readlink leaves them.
 *
 * Beyond the sanitizers: an inode read from a target reads back the same
 * from the kernel's own spelling of it, "socket:[INODE]".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t nlen = nul ? (size_t)(nul - data) : size;
	size_t tlen = nul ? size - nlen - 1 : size;
	char *name = malloc(nlen + 1), *target = malloc(tlen ? tlen : 1);
	char canon[64];
	uint64_t ino, again;
	int fd, n;

	if (!name || !target)
		goto out;
	memcpy(name, data, nlen);
	name[nlen] = '\0';
	memcpy(target, nul ? nul + 1 : data, tlen);

	if (!tls_proc_fd_name(name, &fd) && (name[0] < '0' || name[0] > '9'))
		abort();
	if (!tls_proc_socket_link(target, tlen, &ino)) {
		n = snprintf(canon, sizeof(canon), "socket:[%llu]", (unsigned long long)ino);
		if (tls_proc_socket_link(canon, (size_t)n, &again) || again != ino)
			abort();
	}
out:
	free(name);
	free(target);
	return 0;
}
