// SPDX-License-Identifier: GPL-2.0-only
/* The pinned maps' layout version: read, judged, written (pin_layout.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "pin_layout.h"

int tls_pin_layout_read(const char *pin_dir, __u32 *layout)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), key = 0;
	char path[4096];
	int fd, err = 0;

	*layout = 0;
	if (access(pin_dir, F_OK))
		return errno == ENOENT ? 0 : -errno;
	if ((size_t)snprintf(path, sizeof(path), "%s/tls_state", pin_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	/* tls_state is pinned by every layout so far: without it, nothing
	 * of an instance is there (a directory being made or removed) */
	if (access(path, F_OK))
		return errno == ENOENT ? 0 : -errno;
	snprintf(path, sizeof(path), "%s/tls_layout", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno != ENOENT)
			return -errno;
		*layout = TLS_PIN_LAYOUT_UNVERSIONED;
		return 0;
	}
	/* A lookup writes the map's value size: read only the format known. */
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		err = -errno;
	else if (info.type != BPF_MAP_TYPE_ARRAY || info.key_size != sizeof(__u32) ||
		 info.value_size != sizeof(__u32) || info.max_entries < 1)
		*layout = UINT32_MAX;
	else if (bpf_map_lookup_elem(fd, &key, layout))
		err = -errno;
	else if (!*layout) /* made, not yet marked (a crash right after load) */
		*layout = TLS_PIN_LAYOUT_UNVERSIONED;
	close(fd);
	return err;
}

enum tls_layout_verdict tls_pin_layout_judge(__u32 pinned, __u32 ours, __u32 compat, char *why,
					     size_t len)
{
	enum tls_layout_verdict v;

	if (len)
		why[0] = '\0';
	if (!pinned)
		return TLS_LAYOUT_NONE;
	if (pinned >= compat && pinned <= ours)
		return TLS_LAYOUT_OURS;
	v = pinned > ours ? TLS_LAYOUT_NEWER : TLS_LAYOUT_OLDER;
	if (pinned == UINT32_MAX)
		snprintf(why, len,
			 "pin layout unknown (map tls_layout of another format), this "
			 "tlsd's %u",
			 ours);
	else
		snprintf(why, len, "pin layout %u, this tlsd's %u", pinned, ours);
	return v;
}

int tls_pin_layout_write(int fd)
{
	__u32 key = 0, v = TLS_PIN_LAYOUT;

	return bpf_map_update_elem(fd, &key, &v, BPF_ANY) ? -errno : 0;
}
