// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel feature probes (see features.h). Each probe does the smallest real
 * thing the feature is: it loads a two-instruction program of the type, calls
 * the helper, creates the map with the flag, makes the syscall. A probe that
 * passes while the real use fails later (an LSM that judges by more than the
 * type) is caught by the user of the feature, which records the failure with
 * tls_feature_fail() and degrades the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include <linux/bpf.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "bpffs.h"
#include "kernel_features.h"
#include "log.h"
#include "pidfd.h"


static const struct tls_feat_desc descs[TLS_FEAT__COUNT] = {
	[TLS_FEAT_BTF] = { "btf", true, "the kernel's type information (/sys/kernel/btf/vmlinux)",
			   NULL, NULL, "CONFIG_DEBUG_INFO_BTF=y" },
	[TLS_FEAT_SK_STORAGE] = { "sk_storage", true,
				  "socket-local storage maps: which job a socket belongs to", NULL,
				  NULL, "CONFIG_BPF_SYSCALL=y, kernel 5.2 or later, and CAP_BPF" },
	[TLS_FEAT_SCHED_CLS] = { "sched_cls", true, "tc BPF programs: the classifier", NULL, NULL,
				 "CONFIG_NET_CLS_BPF and CAP_BPF + CAP_NET_ADMIN" },
	[TLS_FEAT_CLSACT] = { "clsact", true, "the clsact qdisc the classifier runs on", NULL, NULL,
			      "CONFIG_NET_SCH_INGRESS" },
	[TLS_FEAT_HTB] = { "htb", true, "the HTB qdisc: one class per band", NULL, NULL,
			   "CONFIG_NET_SCH_HTB" },
	[TLS_FEAT_SK_ITER] = { "sk_iter", false,
			       "an iterator over socket storage (iter/bpf_sk_storage_map)",
			       "no iterator over the flows of live PS sockets",
			       "the classifier mirrors each PS socket's flow into the flow slots, "
			       "which tlsd reads from mapped memory" },
	[TLS_FEAT_CGROUP_SOCK] = { "cgroup_sock", false,
				   "cgroup sock_create/sock_release hooks on the cgroup2 root",
				   "sockets a PS opens are not tagged at birth; closed sockets' "
				   "flows are not filed",
				   "discovery tags a PS's sockets at its next poll, listeners by "
				   "endpoint; PS socket flows are mirrored into the flow slots" },
	[TLS_FEAT_MMAPABLE] = { "mmapable", false, "BPF maps mapped into tlsd's memory",
				"rotations and flow reads without syscalls",
				"one batch syscall per rotation; flow slots read by syscalls" },
	[TLS_FEAT_TCP_SOCK] = { "tcp_sock", false,
				"bpf_skc_to_tcp_sock(): a socket's queued bytes, for flowlets",
				"band changes when a PS socket's queue is drained",
				"band changes after an idle gap or the hold (the clock rule)" },
	[TLS_FEAT_COARSE_CLOCK] = { "coarse_clock", false,
				    "bpf_ktime_get_coarse_ns(): a nearly free clock",
				    "~25 ns more per packet",
				    "bpf_ktime_get_ns() on every packet" },
	[TLS_FEAT_PIDFD_GETFD] = { "pidfd_getfd", false, "pidfd_getfd(2): a PS's existing sockets",
				   "sockets a PS had before it was found are not tagged",
				   "its listeners' and connections' ports as endpoints" },
	[TLS_FEAT_MAP_BATCH] = { "map_batch", false, "batch map lookups and updates",
				 "bulk reads of counters and flows",
				 "one syscall per map entry (more CPU per statistics tick)" },
	[TLS_FEAT_PROC_CN] = { "proc_cn", false, "the proc connector: exec events",
			       "PSes are found when they start",
			       "discovery finds them at its periodic rescan" },
	[TLS_FEAT_PROC_CN_FILTER] = { "proc_cn_filter", false,
				      "the proc connector's event filter (exec only)",
				      "the kernel sends tlsd only exec events",
				      "tlsd receives every process event and drops the others" },
	[TLS_FEAT_RTNL_WATCH] = { "rtnl_watch", false,
				  "rtnetlink notifications of link and tc changes (RTNLGRP_LINK, "
				  "RTNLGRP_TC)",
				  "a tree, filter or interface that another tool changes is not "
				  "noticed, so not healed",
				  "none while tlsd runs; SIGHUP checks the tree and rebuilds what "
				  "is gone" },
	[TLS_FEAT_BURSTS] = { "bursts", false,
			      "policy bursts's code in the classifier (a spin lock and bounded "
			      "loops per packet), as this kernel's verifier judges it",
			      "policy bursts: its jobs share the last band, as under fifo",
			      "the other policies; the classifier loads without that code" },
};

static struct tls_feature feats[TLS_FEAT__COUNT];
static bool bpf_probed;
static int bpf_probe_err;

const struct tls_feat_desc *tls_feat_desc(enum tls_feat f)
{
	return f < TLS_FEAT__COUNT ? &descs[f] : NULL;
}

enum tls_feat tls_feat_by_name(const char *name)
{
	for (int i = 0; i < TLS_FEAT__COUNT; i++)
		if (!strcmp(descs[i].name, name))
			return i;
	return TLS_FEAT__COUNT;
}

const char *tls_feat_state_name(enum tls_feat_state s)
{
	switch (s) {
	case TLS_FEAT_AVAILABLE:
		return "available";
	case TLS_FEAT_IN_USE:
		return "in use";
	case TLS_FEAT_MISSING:
		return "missing";
	default:
		return "not probed";
	}
}

struct tls_feature *tls_features(void)
{
	return feats;
}

bool tls_feature_has(enum tls_feat f)
{
	return f < TLS_FEAT__COUNT &&
	       (feats[f].state == TLS_FEAT_AVAILABLE || feats[f].state == TLS_FEAT_IN_USE);
}

void tls_feature_set(enum tls_feat f, enum tls_feat_state s)
{
	if (f >= TLS_FEAT__COUNT)
		return;
	feats[f].state = s;
	if (s != TLS_FEAT_MISSING) {
		feats[f].err = 0;
		feats[f].stage[0] = '\0';
	}
}

void tls_feature_fail(enum tls_feat f, const char *stage, int err)
{
	if (f >= TLS_FEAT__COUNT)
		return;
	feats[f].state = TLS_FEAT_MISSING;
	feats[f].err = err < 0 ? err : -err;
	snprintf(feats[f].stage, sizeof(feats[f].stage), "%s", stage);
}

void tls_features_reset(void)
{
	memset(feats, 0, sizeof(feats));
	bpf_probed = false;
	bpf_probe_err = 0;
}

/* Probe results: available, or missing at stage with -errno. */
static void record(enum tls_feat f, const char *stage, int err)
{
	if (err)
		tls_feature_fail(f, stage, err);
	else
		tls_feature_set(f, TLS_FEAT_AVAILABLE);
}

/* Instructions, spelled out: the probes are a few each. */
#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i)	 INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o)	 INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(id)	 INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT()		 INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define NINSNS(a)	 (sizeof(a) / sizeof((a)[0]))

/* Load a probe program; 0 or -errno. Probe names start with "tlsp_". */
static int load_prog(enum bpf_prog_type type, const char *name, const struct bpf_insn *insns,
		     size_t n, enum bpf_attach_type eat, __u32 btf_id)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = eat, .attach_btf_id = btf_id);
	int fd = bpf_prog_load(type, name, "GPL", insns, n, &o);

	if (fd < 0)
		return -errno ? -errno : -EINVAL;
	close(fd);
	return 0;
}

static int probe_btf(struct btf **out)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err = libbpf_get_error(btf);

	*out = err ? NULL : btf;
	return err ? (err < 0 ? err : -err) : 0;
}

static int probe_sk_storage(void)
{
	/* libbpf's probe builds the BTF the map type needs; errno is the
	 * kernel's when it says no. */
	int ret;

	errno = 0;
	ret = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL);
	if (ret == 1)
		return 0;
	if (ret < 0)
		return ret;
	return errno ? -errno : -EOPNOTSUPP;
}

static int probe_sched_cls(void)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_REG_0, -1), EXIT() };

	return load_prog(BPF_PROG_TYPE_SCHED_CLS, "tlsp_cls", insns, NINSNS(insns), 0, 0);
}

static int probe_sk_iter(const struct btf *btf)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_REG_0, 0), EXIT() };
	int id;

	if (!btf)
		return -ENOENT;
	/* The iterator target is a BTF function of the kernel's (5.9). */
	id = btf__find_by_name_kind(btf, "bpf_iter_bpf_sk_storage_map", BTF_KIND_FUNC);
	if (id < 0)
		return -ENOENT;
	return load_prog(BPF_PROG_TYPE_TRACING, "tlsp_sk_iter", insns, NINSNS(insns),
			 BPF_TRACE_ITER, id);
}

static int probe_cgroup_sock(const char **stage)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_REG_0, 1), EXIT() };
	char root[4096];
	int err;

	*stage = "program load";
	err = load_prog(BPF_PROG_TYPE_CGROUP_SOCK, "tlsp_sk_create", insns, NINSNS(insns),
			BPF_CGROUP_INET_SOCK_CREATE, 0);
	if (!err)
		err = load_prog(BPF_PROG_TYPE_CGROUP_SOCK, "tlsp_sk_release", insns, NINSNS(insns),
				BPF_CGROUP_INET_SOCK_RELEASE, 0);
	if (err)
		return err;
	/* The hooks attach to the cgroup2 hierarchy's root. */
	*stage = "cgroup2 mount";
	return tls_cgroup2_root(root, sizeof(root));
}

static int probe_mmapable(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tlsp_mmap", 4, 8, 1, &o), err = 0;
	void *p;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		err = -errno;
	else
		munmap(p, page);
	close(fd);
	return err;
}

static int probe_tcp_sock(void)
{
	/* r1 = skb->sk; if (r1) bpf_skc_to_tcp_sock(r1); return 0 */
	const struct bpf_insn insns[] = {
		LDX_DW(BPF_REG_1, BPF_REG_1, offsetof(struct __sk_buff, sk)),
		JEQ_IMM(BPF_REG_1, 0, 1),
		CALL(BPF_FUNC_skc_to_tcp_sock),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	return load_prog(BPF_PROG_TYPE_SCHED_CLS, "tlsp_tcp_sock", insns, NINSNS(insns), 0, 0);
}

static int probe_coarse_clock(void)
{
	const struct bpf_insn insns[] = {
		CALL(BPF_FUNC_ktime_get_coarse_ns),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	return load_prog(BPF_PROG_TYPE_SCHED_CLS, "tlsp_coarse", insns, NINSNS(insns), 0, 0);
}

static int probe_pidfd_getfd(void)
{
	int pidfd = syscall(SYS_pidfd_open, getpid(), 0), fd, err = 0;

	if (pidfd < 0)
		return -errno;
	fd = syscall(SYS_pidfd_getfd, pidfd, pidfd, 0);
	if (fd < 0)
		err = -errno;
	else
		close(fd);
	close(pidfd);
	return err;
}

static int probe_map_batch(void)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, bo);
	__u32 keys[2], vals[2], out, count = 2;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tlsp_batch", 4, 4, 2, NULL), err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &count, &bo) && errno != ENOENT)
		err = -errno;
	close(fd);
	return err;
}

int tls_features_probe_bpf(void)
{
	struct btf *btf = NULL;
	const char *stage;
	int err;

	if (bpf_probed)
		return bpf_probe_err;
	bpf_probed = true;
	record(TLS_FEAT_BTF, "/sys/kernel/btf/vmlinux", probe_btf(&btf));
	record(TLS_FEAT_SK_STORAGE, "map create", probe_sk_storage());
	record(TLS_FEAT_SCHED_CLS, "program load", probe_sched_cls());
	err = probe_sk_iter(btf);
	record(TLS_FEAT_SK_ITER, err == -ENOENT ? "kernel BTF (no such iterator)" : "program load",
	       err);
	err = probe_cgroup_sock(&stage);
	record(TLS_FEAT_CGROUP_SOCK, stage, err);
	record(TLS_FEAT_MMAPABLE, "map create", probe_mmapable());
	record(TLS_FEAT_TCP_SOCK, "helper", probe_tcp_sock());
	record(TLS_FEAT_COARSE_CLOCK, "helper", probe_coarse_clock());
	record(TLS_FEAT_PIDFD_GETFD, "syscall", probe_pidfd_getfd());
	record(TLS_FEAT_MAP_BATCH, "batch lookup", probe_map_batch());
	btf__free(btf);
	for (int i = 0; i < TLS_FEAT__COUNT; i++)
		if (descs[i].required && feats[i].state == TLS_FEAT_MISSING) {
			bpf_probe_err = feats[i].err;
			break;
		}
	return bpf_probe_err;
}

/* RTM_NEWQDISC of an HTB root on ifindex 1; 0 or -errno from the ack. */
static int add_htb_root(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct tc_htb_glob glob = { .version = 3, .rate2quantum = 10, .defcls = 0 };
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	struct nlattr *opts;
	int err = 0, n;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		err = -errno;
		goto out;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = 1;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = 1;
	tcm->tcm_parent = TC_H_ROOT;
	tcm->tcm_handle = 0x10000;
	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_INIT, sizeof(glob), &glob);
	mnl_attr_nest_end(nlh, opts);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		err = -errno;
	else if (mnl_cb_run(buf, n, 1, mnl_socket_get_portid(nl), NULL, NULL) < 0)
		err = -errno;
out:
	mnl_socket_close(nl);
	return err;
}

/* In a child, in a network namespace of its own: results through a pipe. */
static void tc_child(int wfd)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_REG_0, -1), EXIT() };
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = 1, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, to, .handle = 1, .priority = 1);
	int res[4] = { 0, 0, 0, 0 }, fd;

	if (unshare(CLONE_NEWNET)) {
		res[0] = -errno;
		goto out;
	}
	res[1] = bpf_tc_hook_create(&hook);
	if (res[1] == -EEXIST)
		res[1] = 0;
	if (!res[1]) {
		fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "tlsp_cls", "GPL", insns, NINSNS(insns),
				   NULL);
		to.prog_fd = fd;
		res[2] = fd < 0 ? -errno : bpf_tc_attach(&hook, &to);
	}
	res[3] = add_htb_root();
out:
	if (write(wfd, res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

void tls_features_probe_tc(void)
{
	int p[2], res[4] = { -ECHILD, 0, 0, 0 }, st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		tc_child(p[1]);
	}
	close(p[1]);
	if (pid > 0) {
		if (read(p[0], res, sizeof(res)) != sizeof(res))
			res[0] = -ECHILD;
		waitpid(pid, &st, 0);
	}
	close(p[0]);
	if (res[0]) {
		/* no private namespace to try them in: checked at start */
		pr_info("probe: no private network namespace for the qdisc probes (%s)\n",
			strerror(-res[0]));
		return;
	}
	record(TLS_FEAT_CLSACT, "qdisc create", res[1]);
	if (!res[1] && res[2])
		tls_feature_fail(TLS_FEAT_SCHED_CLS, "tc attach", res[2]);
	record(TLS_FEAT_HTB, "qdisc create", res[3]);
}

void tls_feature_describe(enum tls_feat f, char *buf, size_t len)
{
	const struct tls_feature *s = &feats[f];

	if (s->state == TLS_FEAT_MISSING)
		snprintf(buf, len, "%s: missing (%s: %s)", descs[f].name, s->stage,
			 strerror(-s->err));
	else
		snprintf(buf, len, "%s: %s", descs[f].name, tls_feat_state_name(s->state));
}

int tls_features_log_degraded(void)
{
	int n = 0;

	for (int i = 0; i < TLS_FEAT__COUNT; i++) {
		struct tls_feature *s = &feats[i];

		if (descs[i].required || s->state != TLS_FEAT_MISSING || s->logged)
			continue;
		s->logged = true;
		n++;
		pr_warn("kernel feature %s missing (%s: %s): %s; instead: %s\n", descs[i].name,
			s->stage, strerror(-s->err), descs[i].lost, descs[i].fallback);
	}
	return n;
}

enum tls_feat tls_features_required_missing(char *msg, size_t len)
{
	for (int i = 0; i < TLS_FEAT__COUNT; i++) {
		if (!descs[i].required || feats[i].state != TLS_FEAT_MISSING)
			continue;
		snprintf(msg, len,
			 "tlsd needs kernel feature %s (%s), and the kernel refused it (%s: %s): "
			 "check %s",
			 descs[i].name, descs[i].what, feats[i].stage, strerror(-feats[i].err),
			 descs[i].hint);
		return i;
	}
	if (len)
		msg[0] = '\0';
	return TLS_FEAT__COUNT;
}

/* EPERM, not "Operation not permitted": the summary is one line. */
static const char *errno_name(int err)
{
	static const struct {
		int e;
		const char *n;
	} names[] = {
		{ EPERM, "EPERM" },
		{ ENOENT, "ENOENT" },
		{ EINVAL, "EINVAL" },
		{ ENOSYS, "ENOSYS" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ EACCES, "EACCES" },
		{ E2BIG, "E2BIG" },
		{ ENODEV, "ENODEV" },
		{ EFAULT, "EFAULT" },
		{ ENOTSUP, "ENOTSUP" },
		{ ESRCH, "ESRCH" },
		{ EBADF, "EBADF" },
		{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ ENOMEM, "ENOMEM" },
		{ ETIMEDOUT, "ETIMEDOUT" },
	};
	static char buf[24];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

void tls_features_summary(char *buf, size_t len)
{
	size_t off = 0;
	bool any = false;

	buf[0] = '\0';
	for (int i = 0; i < TLS_FEAT__COUNT && off < len; i++)
		if (tls_feature_has(i))
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "",
					descs[i].name);
	for (int i = 0; i < TLS_FEAT__COUNT && off < len; i++) {
		if (feats[i].state != TLS_FEAT_MISSING)
			continue;
		off += snprintf(buf + off, len - off, "%s%s(%s)",
				any ? " " : "; missing: ", descs[i].name,
				errno_name(-feats[i].err));
		any = true;
	}
}
