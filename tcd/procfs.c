// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

static int open_proc(pid_t pid, const char *what)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Read fd into buf[*n..room) until it is full or at its end: 1 if full, 0
 * at the end, -errno. */
static int read_into(int fd, char *buf, size_t *n, size_t room)
{
	while (*n < room) {
		ssize_t r = read(fd, buf + *n, room - *n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return 0;
		*n += (size_t)r;
	}
	return 1;
}

ssize_t tls_proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	size_t n = 0;
	int fd, r;

	if (!len)
		return -EINVAL;
	fd = open_proc(pid, what);
	if (fd < 0)
		return -errno;
	r = read_into(fd, buf, &n, len - 1);
	close(fd);
	if (r < 0)
		return r;
	buf[n] = '\0';
	return n;
}

/* All of fd into *buf (tls_proc_read_all); closes fd. */
static ssize_t read_all_fd(int fd, char **buf, size_t *cap, size_t max)
{
	size_t n = 0;
	int r = 1;

	while (r == 1) {
		if (n + 1 >= *cap) {
			size_t ncap = *cap ? *cap * 2 : 4096;
			char *nb;

			if (*cap >= max)
				break; /* cut at max - 1 */
			if (ncap > max)
				ncap = max;
			nb = realloc(*buf, ncap);
			if (!nb)
				break; /* what fits: judged on that */
			*buf = nb;
			*cap = ncap;
		}
		r = read_into(fd, *buf, &n, *cap - 1);
	}
	close(fd);
	if (r < 0)
		return r;
	if (!*cap)
		return -ENOMEM;
	(*buf)[n] = '\0';
	return (ssize_t)n;
}

ssize_t tls_proc_read_all(pid_t pid, const char *what, char **buf, size_t *cap, size_t max)
{
	int fd = open_proc(pid, what);

	return fd < 0 ? -errno : read_all_fd(fd, buf, cap, max);
}

ssize_t tls_file_read_all(const char *path, char **buf, size_t *cap, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : read_all_fd(fd, buf, cap, max);
}

int tls_proc_netns(pid_t pid, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

int tls_proc_fd_name(const char *name, int *fd)
{
	if (name[0] < '0' || name[0] > '9')
		return -EINVAL;
	*fd = atoi(name);
	return 0;
}

int tls_proc_socket_link(const char *target, size_t len, uint64_t *ino)
{
	char buf[64], *end;
	unsigned long long v;

	/* A copy, NUL-terminated for strtoull: readlink's buffer is not. A
	 * target longer than the buffer tls_proc_sockets reads into cannot
	 * come from it. */
	if (len < 9 || len >= sizeof(buf) || strncmp(target, "socket:[", 8))
		return -EINVAL;
	memcpy(buf, target, len);
	buf[len] = '\0';
	v = strtoull(buf + 8, &end, 10);
	if (*end != ']')
		return -EINVAL;
	*ino = v;
	return 0;
}

int tls_proc_sockets(pid_t pid, int *fds, uint64_t *inodes, int max)
{
	char path[64], link[64];
	struct dirent *de;
	int n = 0, dfd;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	dfd = dirfd(dir);
	while ((de = readdir(dir)) && n < max) {
		ssize_t l;
		uint64_t ino;
		int fd;

		/* the name first: "." and ".." need no readlink */
		if (tls_proc_fd_name(de->d_name, &fd))
			continue;
		l = readlinkat(dfd, de->d_name, link, sizeof(link) - 1);
		if (l < 0 || tls_proc_socket_link(link, (size_t)l, &ino))
			continue;
		fds[n] = fd;
		inodes[n] = ino;
		n++;
	}
	closedir(dir);
	return n;
}

int tls_netns_socket(int netns_fd, int domain, int type, int protocol)
{
	int self, fd, err = 0;

	if (netns_fd < 0) {
		fd = socket(domain, type, protocol);
		return fd < 0 ? -errno : fd;
	}
	/* Only this thread moves (setns is per thread), and only the loop
	 * thread makes sockets: the /proc readers (proc_reader.c) make none. */
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET)) {
		err = -errno;
		close(self);
		return err;
	}
	fd = socket(domain, type, protocol);
	if (fd < 0)
		err = -errno;
	if (setns(self, CLONE_NEWNET)) {
		/* every later socket would land in the wrong namespace */
		pr_warn("cannot return to tlsd's network namespace: %s\n", strerror(errno));
		abort();
	}
	close(self);
	return fd < 0 ? err : fd;
}
