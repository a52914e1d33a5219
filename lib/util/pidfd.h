/* SPDX-License-Identifier: GPL-2.0-only */
/* The pidfd syscalls by number: glibc before 2.36 has no wrappers for them,
 * and older headers no numbers (the same on every architecture). */
#ifndef TLS_PIDFD_H
#define TLS_PIDFD_H

#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#endif /* TLS_PIDFD_H */
