/* SPDX-License-Identifier: GPL-2.0-only */
/* Small file-system helpers shared by the daemon and the BPF side. */
#ifndef TLS_FS_H
#define TLS_FS_H

#include <sys/types.h>

/*
 * mkdir -p: path and every missing parent, each with mode (existing ones
 * are left as they are). 0, or -errno with errno set, the directory that
 * failed in failed (if not NULL, at least PATH_MAX bytes). No logging: the
 * caller says what the directory was for.
 */
int tls_mkdir_p(const char *path, mode_t mode, char *failed);

#endif
