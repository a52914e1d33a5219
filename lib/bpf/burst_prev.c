// SPDX-License-Identifier: GPL-2.0-only
/* A previous instance's burst order, through its pinned tail-call slot
 * (burst_prev.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "btf_layout.h"
#include "burst_prev.h"
#include "tls_common.h"

/* A program uses few maps (tlsd's bursts half: a dozen). */
#define MAX_PROG_MAPS 64

/* The map named tls_burst among prog_fd's, as a descriptor, or -errno. */
static int burst_map_of(int prog_fd, const struct btf *btf, __u32 value_type_id)
{
	__u32 ids[MAX_PROG_MAPS], len, i, n;
	struct bpf_prog_info pi;
	int err = -ENOENT;

	memset(&pi, 0, sizeof(pi));
	len = sizeof(pi);
	pi.nr_map_ids = MAX_PROG_MAPS;
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len))
		return -errno;
	n = pi.nr_map_ids < MAX_PROG_MAPS ? pi.nr_map_ids : MAX_PROG_MAPS;
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi;
		struct btf *old;
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		bool same;

		if (fd < 0)
			continue; /* gone meanwhile */
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) || strcmp(mi.name, "tls_burst")) {
			close(fd);
			continue;
		}
		/* the name alone: another version's order, or another
		 * program's map of that name */
		same = mi.type == BPF_MAP_TYPE_ARRAY && mi.key_size == sizeof(__u32) &&
		       mi.value_size == sizeof(struct tls_burst) && mi.max_entries == 1 &&
		       mi.btf_id && mi.btf_value_type_id;
		old = same ? btf__load_from_kernel_by_id(mi.btf_id) : NULL;
		same = old && tls_btf_same_layout(old, mi.btf_value_type_id, btf, value_type_id);
		btf__free(old);
		if (same)
			return fd;
		close(fd);
		err = -ESTALE;
	}
	return err;
}

int tls_burst_prev_open(const char *tail_pin, const struct btf *btf, __u32 value_type_id)
{
	__u32 zero = 0, prog_id = 0;
	int tail, prog, err;

	if (!btf || !value_type_id)
		return -ENOENT;
	tail = bpf_obj_get(tail_pin);
	if (tail < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	/* a prog array's slot read from user space gives the program's id */
	err = bpf_map_lookup_elem(tail, &zero, &prog_id) ? -errno : 0;
	close(tail);
	if (err)
		return err;
	prog = bpf_prog_get_fd_by_id(prog_id);
	if (prog < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	err = burst_map_of(prog, btf, value_type_id);
	close(prog);
	return err;
}
