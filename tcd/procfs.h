/* SPDX-License-Identifier: GPL-2.0-only */
/* What discovery reads of a process in /proc. Each returns a negative errno
 * when the process is gone or unreadable: a race every caller expects. */
#ifndef TLS_PROCFS_H
#define TLS_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/WHAT (cmdline, environ, comm) into buf; the length read (the
 * contents cut at len - 1 bytes and NUL-terminated) or -errno. */
ssize_t tls_proc_read(pid_t pid, const char *what, char *buf, size_t len);
/* All of /proc/PID/WHAT into *buf (realloc'd, *cap its size), growing up
 * to max bytes (then cut at max - 1); NUL-terminated; the length or -errno. */
ssize_t tls_proc_read_all(pid_t pid, const char *what, char **buf, size_t *cap, size_t max);
/* The same of any file (proc_reader.c reads /proc/PID/WHAT by its path). */
ssize_t tls_file_read_all(const char *path, char **buf, size_t *cap, size_t max);
/* The inode of the process's network namespace. */
int tls_proc_netns(pid_t pid, uint64_t *ino);
/* The process's socket fds: fd numbers and inodes; the count (at most max)
 * or -errno. */
int tls_proc_sockets(pid_t pid, int *fds, uint64_t *inodes, int max);

/*
 * The pure halves of tls_proc_sockets, apart for the fuzzer
 * (tests/fuzz/fuzz_procfs.c). An entry's name in /proc/PID/fd: 0 and its
 * fd number if it starts with a digit, -EINVAL if not ("." and "..").
 * Its link's target (len bytes as readlink gives them, no NUL needed): 0
 * and the socket's inode for "socket:[12345]", -EINVAL for anything else
 * (a file, a pipe, an anon_inode).
 */
int tls_proc_fd_name(const char *name, int *fd);
int tls_proc_socket_link(const char *target, size_t len, uint64_t *ino);

/* A socket created inside another network namespace (an open
 * /proc/PID/ns/net; -1: our own): it lives there for good, the caller stays
 * here. The fd or -errno. */
int tls_netns_socket(int netns_fd, int domain, int type, int protocol);

#endif /* TLS_PROCFS_H */
