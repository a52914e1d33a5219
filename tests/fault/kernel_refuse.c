// SPDX-License-Identifier: GPL-2.0-only
/*
 * A kernel that lacks or refuses features, for tests: an LD_PRELOAD shim.
 *
 *   LD_PRELOAD=build/libtls-refuse.so TLS_REFUSE=sk_iter,mmapable tlsd ...
 *
 * TLS_REFUSE names features as lib/bpf/kernel_features.h does; each is refused the
 * way a real kernel without it refuses it:
 *
 *   sk_iter         BPF_PROG_LOAD of BPF_PROG_TYPE_TRACING: EPERM, before
 *                   verification (a kernel seen in the field refuses iterators
 *                   and fentry alike)
 *   cgroup_sock     BPF_PROG_LOAD of BPF_PROG_TYPE_CGROUP_SOCK: EPERM
 *   mmapable        BPF_MAP_CREATE with BPF_F_MMAPABLE: EINVAL (before 5.5)
 *   map_batch       BPF_MAP_*_BATCH commands: EINVAL (before 5.6)
 *   tcp_sock        a program that can reach bpf_skc_to_tcp_sock(): EINVAL
 *   coarse_clock    a program that can reach bpf_ktime_get_coarse_ns(): EINVAL
 *   pidfd_getfd     the pidfd_getfd syscall: ENOSYS (before 5.6)
 *   proc_cn         a NETLINK_CONNECTOR socket: EPROTONOSUPPORT
 *   proc_cn_filter  the 8-byte (filtered) proc connector subscription is
 *                   dropped without an answer, as kernels before 6.6 drop it
 *   rtnl_watch      joining an rtnetlink multicast group (NETLINK_ADD_MEMBERSHIP
 *                   on a NETLINK_ROUTE socket): EPERM, as an LSM or a seccomp
 *                   filter that keeps a service from listening refuses it
 *   bursts          BPF_PROG_LOAD of policy bursts's program (named
 *                   tls_classify_bursts, cut to the kernel's 15 characters):
 *                   E2BIG, as a verifier that gives up at a million
 *                   instructions refuses it (Debian 12's 6.1 did, before the
 *                   program was split from the classifier)
 *
 * and two that tlsd requires, to see it refuse to start with the right words:
 *
 *   sk_storage      BPF_MAP_CREATE of BPF_MAP_TYPE_SK_STORAGE: EINVAL (before 5.2)
 *   sched_cls       BPF_PROG_LOAD of BPF_PROG_TYPE_SCHED_CLS: EPERM (an LSM)
 *
 * Helpers: the verifier rejects only calls it can reach; calls behind a gate
 * the loader turned off are dead code, which the verifier removes. So the
 * shim lets the kernel verify the program, reads back what the kernel kept
 * (its xlated instructions) and refuses the load if a call to the helper is
 * still there, which is exactly when the kernel without it would refuse.
 *
 * libbpf reaches the kernel through syscall(SYS_bpf, ...), libmnl and libz
 * through socket(), sendto() and setsockopt(): those are what this shim wraps.
 *
 * And a process whose memory stalls its readers:
 *
 *   LD_PRELOAD=build/libtls-refuse.so TLS_STALL_PROC=environ:5000:COMM tlsd ...
 *
 * TLS_STALL_PROC=WHAT:MS[:COMM]: a read() of /proc/PID/WHAT (cmdline or
 * environ: files whose reads go through the process's memory map) of a
 * process other than the caller, and with COMM only of one whose
 * /proc/PID/comm is COMM, sleeps. The first such read of a process opens a
 * stall of MS milliseconds for it, and every read of it that comes during
 * the stall sleeps until the stall ends (as every reader of a process whose
 * mmap lock is held, or whose memory is a file of a FUSE server that does
 * not answer, waits for the same release); later reads pass at once. Each
 * process stalls once, each on its own clock. A stalled read says so on
 * stderr when it begins and when it ends ("kernel_refuse: pid N: ...").
 * tlsd opens these files with open() and reads them with read() (glibc's
 * own opens, as inside fopen(), do not pass through a shim); open, open64,
 * openat and openat64 are wrapped all the same, read() looks the fd up, and
 * close() forgets it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static bool refused(const char *feature)
{
	const char *list = getenv("TLS_REFUSE");
	size_t n = strlen(feature);

	while (list && *list) {
		const char *end = strchrnul(list, ',');

		if ((size_t)(end - list) == n && !strncmp(list, feature, n))
			return true;
		list = *end ? end + 1 : end;
	}
	return false;
}

static long (*real_syscall)(long, ...);

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real_syscall(nr, a, b, c, d, e, f);
}

static long fail(int err)
{
	errno = err;
	return -1;
}

/* What a kernel symbol's address is, from /proc/kallsyms; 0 if unknown. */
static unsigned long ksym(const char *name)
{
	char line[512], sym[256];
	unsigned long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	char type;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

/* The kernel kept a call to the kernel function fn in program fd: xlated
 * helper calls hold the function's offset from __bpf_call_base. */
static bool keeps_call(int fd, const char *fn)
{
	unsigned long base = ksym("__bpf_call_base"), target = ksym(fn);
	struct bpf_prog_info info = {};
	union bpf_attr attr = {};
	struct bpf_insn *insns;
	bool found = false;
	__u32 n;

	if (!base || !target) {
		fprintf(stderr,
			"kernel_refuse: no address for %s in /proc/kallsyms: cannot tell "
			"whether the program reaches it\n",
			fn);
		abort();
	}
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	if (sys(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, (long)&attr, sizeof(attr), 0, 0, 0))
		return false;
	n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(n ? n : 1, sizeof(*insns));
	if (!insns)
		return false;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*insns);
	info.xlated_prog_insns = (uintptr_t)insns;
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	if (!sys(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, (long)&attr, sizeof(attr), 0, 0, 0))
		for (__u32 i = 0; i < n && !found; i++)
			found = insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == 0 &&
				insns[i].imm == (__s32)(target - base);
	free(insns);
	return found;
}

static long bpf_call(int cmd, union bpf_attr *attr, unsigned int size)
{
	long fd;

	switch (cmd) {
	case BPF_PROG_LOAD:
		if (attr->prog_type == BPF_PROG_TYPE_TRACING && refused("sk_iter"))
			return fail(EPERM);
		if (attr->prog_type == BPF_PROG_TYPE_CGROUP_SOCK && refused("cgroup_sock"))
			return fail(EPERM);
		if (attr->prog_type == BPF_PROG_TYPE_SCHED_CLS && refused("sched_cls"))
			return fail(EPERM);
		if (attr->prog_type == BPF_PROG_TYPE_SCHED_CLS && refused("bursts") &&
		    !strncmp(attr->prog_name, "tls_classify_bursts", sizeof(attr->prog_name) - 1))
			return fail(E2BIG);
		fd = sys(SYS_bpf, cmd, (long)attr, size, 0, 0, 0);
		if (fd >= 0 &&
		    ((refused("tcp_sock") && keeps_call(fd, "bpf_skc_to_tcp_sock")) ||
		     (refused("coarse_clock") && keeps_call(fd, "bpf_ktime_get_coarse_ns")))) {
			close(fd);
			return fail(EINVAL);
		}
		return fd;
	case BPF_MAP_CREATE:
		if ((attr->map_flags & BPF_F_MMAPABLE) && refused("mmapable"))
			return fail(EINVAL);
		if (attr->map_type == BPF_MAP_TYPE_SK_STORAGE && refused("sk_storage"))
			return fail(EINVAL);
		break;
	case BPF_MAP_LOOKUP_BATCH:
	case BPF_MAP_LOOKUP_AND_DELETE_BATCH:
	case BPF_MAP_UPDATE_BATCH:
	case BPF_MAP_DELETE_BATCH:
		if (refused("map_batch"))
			return fail(EINVAL);
		break;
	}
	return sys(SYS_bpf, cmd, (long)attr, size, 0, 0, 0);
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_bpf)
		return bpf_call((int)a[0], (union bpf_attr *)a[1], (unsigned int)a[2]);
	if (nr == SYS_pidfd_getfd && refused("pidfd_getfd"))
		return fail(ENOSYS);
	return sys(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);

	if (domain == AF_NETLINK && protocol == NETLINK_CONNECTOR && refused("proc_cn"))
		return (int)fail(EPROTONOSUPPORT);
	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	return real(domain, type, protocol);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	const struct nlmsghdr *nlh = buf;

	/* A proc connector subscription with the 6.6 filter: an older kernel
	 * drops it, and answers nothing. */
	if (refused("proc_cn_filter") && len >= NLMSG_LENGTH(sizeof(struct cn_msg)) &&
	    nlh->nlmsg_len <= len) {
		const struct cn_msg *cn = NLMSG_DATA(nlh);

		if (cn->id.idx == CN_IDX_PROC && cn->len == 8)
			return (ssize_t)len;
	}
	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int, const struct sockaddr *,
				   socklen_t))dlsym(RTLD_NEXT, "sendto");
	return real(fd, buf, len, flags, to, tolen);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);
	int proto = 0;
	socklen_t plen = sizeof(proto);

	if (level == SOL_NETLINK && name == NETLINK_ADD_MEMBERSHIP && refused("rtnl_watch") &&
	    !getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) && proto == NETLINK_ROUTE)
		return (int)fail(EPERM);
	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT,
									      "setsockopt");
	return real(fd, level, name, val, len);
}

/* TLS_STALL_PROC: the stalls (tests/ns/test_proc_stall.sh). */

#define STALL_FDS  4096 /* fds followed; a higher one is never stalled */
#define STALL_PIDS 64	/* processes stalled at most */

/* Per fd, the pid whose stalled file it is (0: none); per pid, its stall's
 * end. Reader threads race: atomics, and a slot is claimed by CAS. */
static int stall_fd_pid[STALL_FDS];
static struct {
	int pid;
	uint64_t end_ns;
} stalls[STALL_PIDS];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The real open(), for the shim's own reads of comm. */
static int real_open(const char *path, int flags, mode_t mode)
{
	static int (*real)(const char *, int, ...);

	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	return real(path, flags, mode);
}

static ssize_t real_read(int fd, void *buf, size_t len)
{
	static ssize_t (*real)(int, void *, size_t);

	if (!real)
		real = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	return real(fd, buf, len);
}

/* The stall's milliseconds, what it stalls and whose comm, from
 * TLS_STALL_PROC; false if unset or malformed. */
static bool stall_conf(char *what, size_t wlen, unsigned long *ms, char *comm, size_t clen)
{
	const char *s = getenv("TLS_STALL_PROC"), *c1, *c2;
	char *end;

	if (!s || !(c1 = strchr(s, ':')) || (size_t)(c1 - s) >= wlen)
		return false;
	memcpy(what, s, c1 - s);
	what[c1 - s] = '\0';
	*ms = strtoul(c1 + 1, &end, 10);
	if (end == c1 + 1 || (*end && *end != ':'))
		return false;
	c2 = *end ? end + 1 : end;
	if (strlen(c2) >= clen)
		return false;
	strcpy(comm, c2);
	return true;
}

/* The pid whose /proc file path is, if the stall applies to it; else 0. */
static int stall_target(const char *path)
{
	char what[32], comm[32], buf[64];
	unsigned long ms;
	char *end;
	long pid;
	ssize_t n;
	int fd;

	if (!path || strncmp(path, "/proc/", 6) ||
	    !stall_conf(what, sizeof(what), &ms, comm, sizeof(comm)))
		return 0;
	pid = strtol(path + 6, &end, 10);
	if (end == path + 6 || *end != '/' || strcmp(end + 1, what) || pid <= 0 || pid == getpid())
		return 0;
	if (!*comm)
		return (int)pid;
	snprintf(buf, sizeof(buf), "/proc/%ld/comm", pid);
	fd = real_open(buf, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	n = real_read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, comm) ? 0 : (int)pid;
}

static int mark(int fd, const char *path)
{
	int pid = fd >= 0 && fd < STALL_FDS ? stall_target(path) : 0;

	if (pid)
		__atomic_store_n(&stall_fd_pid[fd], pid, __ATOMIC_RELEASE);
	return fd;
}

/* The end of pid's stall: the first read opens it. */
static uint64_t stall_end(int pid)
{
	char what[32], comm[32];
	unsigned long ms = 0;
	unsigned int i;

	stall_conf(what, sizeof(what), &ms, comm, sizeof(comm));
	for (i = 0; i < STALL_PIDS; i++) {
		int cur = __atomic_load_n(&stalls[i].pid, __ATOMIC_ACQUIRE), none = 0;
		uint64_t end;

		if (cur == pid) {
			/* its opener may not have written the end yet */
			while (!(end = __atomic_load_n(&stalls[i].end_ns, __ATOMIC_ACQUIRE)))
				sched_yield();
			return end;
		}
		if (!cur && __atomic_compare_exchange_n(&stalls[i].pid, &none, pid, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			end = mono_ns() + ms * 1000000ULL;
			__atomic_store_n(&stalls[i].end_ns, end, __ATOMIC_RELEASE);
			fprintf(stderr, "kernel_refuse: pid %d: /proc/%d/%s stalled for %lu ms\n",
				pid, pid, what, ms);
			return end;
		}
	}
	return 0; /* no room: not stalled */
}

static void stall(int pid)
{
	uint64_t end = stall_end(pid);
	struct timespec ts = { .tv_sec = end / 1000000000ULL, .tv_nsec = end % 1000000000ULL };

	if (end <= mono_ns())
		return;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	fprintf(stderr, "kernel_refuse: pid %d: stall over\n", pid);
}

/* Variadic like libc's: the mode is there only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags)                                                                            \
	({                                                                                         \
		va_list ap;                                                                        \
		mode_t m = 0;                                                                      \
                                                                                                   \
		va_start(ap, flags);                                                               \
		if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)                         \
			m = va_arg(ap, mode_t);                                                    \
		va_end(ap);                                                                        \
		m;                                                                                 \
	})

/* Every open the shim wraps, as the openat it is (open(path) is
 * openat(AT_FDCWD, path)); a path relative to dirfd does not start with
 * /proc/, so it is never stalled. */
static int open_marked(int dirfd, const char *path, int flags, mode_t mode)
{
	static int (*real)(int, const char *, int, ...);
	size_t n = path ? strlen(path) : 0;

	/* state_eio: tlsd's state file cannot be read (a disk's EIO; root
	 * is not refused EACCES) */
	if (n > 6 && !strcmp(path + n - 6, ".state") && refused("state_eio")) {
		errno = EIO;
		return -1;
	}
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	return mark(real(dirfd, path, flags, mode), path);
}

int open(const char *path, int flags, ...)
{
	return open_marked(AT_FDCWD, path, flags, MODE_ARG(flags));
}

int open64(const char *path, int flags, ...)
{
	return open_marked(AT_FDCWD, path, flags, MODE_ARG(flags));
}

int openat(int dirfd, const char *path, int flags, ...)
{
	return open_marked(dirfd, path, flags, MODE_ARG(flags));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	return open_marked(dirfd, path, flags, MODE_ARG(flags));
}

ssize_t read(int fd, void *buf, size_t len)
{
	int pid = fd >= 0 && fd < STALL_FDS ? __atomic_load_n(&stall_fd_pid[fd], __ATOMIC_ACQUIRE) :
					      0;

	if (pid)
		stall(pid);
	return real_read(fd, buf, len);
}

int close(int fd)
{
	static int (*real)(int);

	if (fd >= 0 && fd < STALL_FDS)
		__atomic_store_n(&stall_fd_pid[fd], 0, __ATOMIC_RELEASE);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	return real(fd);
}
