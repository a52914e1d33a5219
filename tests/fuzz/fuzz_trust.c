// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: what discovery's trust model (tcd/trust.c) parses of
 * /proc, before anything else of an untrusted process is read:
 * /proc/PID/status (tls_parse_proc_status) and /proc/PID/cgroup
 * (tls_parse_proc_cgroup), each given the input as the kernel's bytes (not
 * NUL-terminated), and a cgroups entry of the configuration
 * (tls_trust_cgroup_path) given it as a string.
 *
 * The cgroup path goes into a heap buffer of a size the input's first
 * byte chooses (1 to 64), so that ASan sees a write one past its end.
 *
 * Beyond the sanitizers: a cgroup path parsed is a path ("/...", no NUL
 * inside), an entry accepted yields a path at or below which the path
 * itself lies, and the parsed groups fit their array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t plen = size ? (size_t)(data[0] % 64) + 1 : 1;
	char *buf = malloc(size ? size : 1), *str = malloc(size + 1), *small = malloc(plen);
	char path[TLS_CGROUP_PATH_MAX], err[200];
	struct tls_proc_creds c;

	if (!buf || !str || !small)
		goto out;
	memcpy(buf, data, size);
	if (!tls_parse_proc_status(buf, size, &c) && c.ngroups > TLS_PROC_GROUPS_MAX)
		abort();
	if (!tls_parse_proc_cgroup(buf, size, small, plen) &&
	    (small[0] != '/' || strlen(small) >= plen))
		abort();
	memcpy(str, data, size);
	str[size] = '\0';
	if (!tls_trust_cgroup_path(str, path, sizeof(path), err, sizeof(err)) &&
	    (path[0] != '/' || !tls_cgroup_under(path, path)))
		abort();
out:
	free(small);
	free(buf);
	free(str);
	return 0;
}
