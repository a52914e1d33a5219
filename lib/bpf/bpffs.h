/* SPDX-License-Identifier: GPL-2.0-only */
/* Where the kernel objects live: bpffs for pins, cgroup v2 for the hook. */
#ifndef TLS_BPFFS_H
#define TLS_BPFFS_H

#include <stddef.h>

#define TLS_BPFFS "/sys/fs/bpf"

/* Make sure TLS_BPFFS is a bpffs, mounting one if needed. */
int tls_bpffs_ensure(void);
/* A pin directory and its parents (mode 0700), said if it fails. */
int tls_pin_mkdir(const char *path);
/* The mount point of the cgroup v2 hierarchy (unified or hybrid). */
int tls_cgroup2_root(char *buf, size_t len);

#endif /* TLS_BPFFS_H */
