// SPDX-License-Identifier: GPL-2.0-only
/* The daemon's state in the maps of pin layouts 1 and 2: read once, then
 * unpinned (legacy_state.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "legacy_state.h"
#include "log.h"
#include "tls_common.h"

struct legacy_saved_qdisc {
	__u32 len;
	__u8 msg[TLS_LEGACY_QDISC_MAX];
};

/* The map pinned as pin_dir/name if it is an array of __u32 keys and
 * values of value_size (a lookup writes that many bytes): its fd and
 * entries, -ENOENT if not pinned, -ESTALE if of another format. */
static int open_checked(const char *pin_dir, const char *name, __u32 value_size, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", pin_dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (info.type != BPF_MAP_TYPE_ARRAY || info.key_size != sizeof(__u32) ||
	    info.value_size != value_size || info.max_entries < 1) {
		pr_warn("%s: not of the format pin layouts 1 and 2 gave it (value size %u, "
			"expected %u)\n",
			path, info.value_size, value_size);
		close(fd);
		return -ESTALE;
	}
	*entries = info.max_entries;
	return fd;
}

int tls_legacy_state_pinned(const char *pin_dir)
{
	const char *names[] = { TLS_LEGACY_QDISC_MAP, TLS_LEGACY_NAMES_MAP };
	char path[4096];

	for (size_t i = 0; i < 2; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", pin_dir, names[i]) <
			    sizeof(path) &&
		    access(path, F_OK) == 0)
			return 1;
	return 0;
}

int tls_legacy_read_saved_qdisc(const char *pin_dir, void *msg, size_t *len)
{
	struct legacy_saved_qdisc *v;
	__u32 zero = 0, entries;
	int fd = open_checked(pin_dir, TLS_LEGACY_QDISC_MAP, sizeof(*v), &entries), err = 0;

	if (fd < 0)
		return fd;
	v = calloc(1, sizeof(*v));
	if (!v)
		err = -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, v))
		err = -errno;
	else if (v->len > *len || v->len > TLS_LEGACY_QDISC_MAX)
		err = -E2BIG;
	else {
		memcpy(msg, v->msg, v->len);
		*len = v->len;
	}
	free(v);
	close(fd);
	return err;
}

int tls_legacy_read_job_names(const char *pin_dir, tls_legacy_name_cb cb, void *ctx)
{
	char name[TLS_LEGACY_NAME_LEN];
	__u32 id, entries;
	int fd = open_checked(pin_dir, TLS_LEGACY_NAMES_MAP, sizeof(name), &entries), err = 0;

	if (fd < 0)
		return fd;
	for (id = 1; id < entries && id < TLS_MAX_JOBS && !err; id++) {
		if (bpf_map_lookup_elem(fd, &id, name)) {
			err = -errno;
			break;
		}
		name[sizeof(name) - 1] = '\0';
		if (name[0])
			err = cb(id, name, ctx);
	}
	close(fd);
	return err;
}

int tls_legacy_state_unpin(const char *pin_dir)
{
	const char *names[] = { TLS_LEGACY_QDISC_MAP, TLS_LEGACY_NAMES_MAP };
	char path[4096];
	int err = 0;

	for (size_t i = 0; i < 2; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", pin_dir, names[i]) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT) {
			err = -errno;
			pr_warn("cannot remove pin %s: %s\n", path, strerror(errno));
		}
	}
	return err;
}
