// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "bpffs.h"
#include "fs.h"
#include "log.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

int tls_bpffs_ensure(void)
{
	struct statfs st;

	if (statfs(TLS_BPFFS, &st) == 0 && (unsigned long)st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", TLS_BPFFS, "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_warn("bpffs unavailable: %s is not a bpf filesystem and mounting one failed: %s\n",
			TLS_BPFFS, strerror(-err));
		return err;
	}
	pr_info("mounted bpffs on %s\n", TLS_BPFFS);
	return 0;
}

int tls_pin_mkdir(const char *path)
{
	char failed[PATH_MAX];
	int err = tls_mkdir_p(path, 0700, failed);

	if (err)
		pr_warn("cannot create directory %s: %s\n", failed, strerror(-err));
	return err;
}

int tls_cgroup2_root(char *buf, size_t len)
{
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "cgroup2"))
			continue;
		if ((size_t)snprintf(buf, len, "%s", m->mnt_dir) >= len)
			err = -ENAMETOOLONG;
		else
			err = 0;
		break;
	}
	endmntent(f);
	if (err == -ENOENT)
		pr_warn("no cgroup v2 hierarchy is mounted: the sock_create hook needs one\n");
	return err;
}
