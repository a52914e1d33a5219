/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel features tlsd uses, probed rather than assumed from a version
 * number: distribution, vendor and hardened kernels, lockdown and LSMs each
 * refuse different things. A required feature missing stops tlsd with one
 * error naming the kernel option or capability to check; an optional one
 * missing costs what its table entry says, with one log line, and something
 * else takes over.
 *
 * The state is the process's (the kernel is one): tls_features() returns it.
 * Probes run once and are cached; the users of a feature then record whether
 * they use it (in_use) or whether it failed them later (tls_feature_fail).
 */
#ifndef TLS_KERNEL_FEATURES_H
#define TLS_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

enum tls_feat {
	/* required */
	TLS_FEAT_BTF,	     /* vmlinux BTF: CO-RE relocations */
	TLS_FEAT_SK_STORAGE, /* socket-local storage maps: membership */
	TLS_FEAT_SCHED_CLS,  /* tc BPF programs (cls_bpf) */
	TLS_FEAT_CLSACT,     /* the clsact qdisc (sch_ingress) */
	TLS_FEAT_HTB,	     /* the HTB qdisc */
	/* optional */
	TLS_FEAT_SK_ITER,      /* iter/bpf_sk_storage_map */
	TLS_FEAT_CGROUP_SOCK,  /* cgroup sock_create / sock_release hooks */
	TLS_FEAT_MMAPABLE,     /* BPF_F_MMAPABLE array maps */
	TLS_FEAT_TCP_SOCK,     /* bpf_skc_to_tcp_sock() */
	TLS_FEAT_COARSE_CLOCK, /* bpf_ktime_get_coarse_ns() */
	TLS_FEAT_PIDFD_GETFD,  /* pidfd_getfd(2) */
	TLS_FEAT_MAP_BATCH,    /* batch map operations */
	TLS_FEAT_PROC_CN,      /* the proc connector (exec events) */
	TLS_FEAT_PROC_CN_FILTER /* its per-event filter (6.6) */,
	TLS_FEAT_RTNL_WATCH,	 /* rtnetlink link and tc notifications */
	TLS_FEAT_BURSTS,	 /* policy bursts's classifier code, verified */
	TLS_FEAT__COUNT
};

/* A feature's state. */
enum tls_feat_state {
	TLS_FEAT_UNKNOWN = 0, /* not probed (yet) */
	TLS_FEAT_AVAILABLE,   /* the kernel has it; this process does not use it */
	TLS_FEAT_IN_USE,
	TLS_FEAT_MISSING, /* err says why */
};

struct tls_feat_desc {
	const char *name;
	bool required;
	const char *what;     /* what it is, for --probe */
	const char *lost;     /* optional: what tlsd loses without it */
	const char *fallback; /* optional: what takes over */
	const char *hint;     /* required: the kernel option or capability to check */
};

struct tls_feature {
	enum tls_feat_state state;
	int err;	/* MISSING: the negative errno the kernel gave */
	char stage[48]; /* MISSING: what was refused, e.g. "program load" */
	bool logged;	/* the degraded-mode line was written */
};

const struct tls_feat_desc *tls_feat_desc(enum tls_feat f);
/* By name; TLS_FEAT__COUNT if unknown. */
enum tls_feat tls_feat_by_name(const char *name);
const char *tls_feat_state_name(enum tls_feat_state s);

/* The process's feature table. */
struct tls_feature *tls_features(void);

/*
 * Probe the BPF-side features (BTF, sk_storage, sched_cls and all optional
 * ones but the proc connector's, which discovery probes when it opens it).
 * Cached: later calls return at once. 0, or the first required feature's
 * negative errno if one is missing.
 */
int tls_features_probe_bpf(void);
/* The qdiscs and the classifier's tc attachment, for real, on the loopback
 * device of a private network namespace (a child process): for --probe. */
void tls_features_probe_tc(void);
/* The proc connector's and rtnetlink's features are the daemon's, probed
 * where it opens them: tls_pconn_probe() and tls_tw_probe(). */

bool tls_feature_has(enum tls_feat f);
void tls_feature_set(enum tls_feat f, enum tls_feat_state s);
/* f failed at stage with err (negative errno): missing from now on. */
void tls_feature_fail(enum tls_feat f, const char *stage, int err);
/* Forget every probe (tests). */
void tls_features_reset(void);

/*
 * One log line per optional feature that is missing (once each): what is
 * lost and what takes over. Returns how many.
 */
int tls_features_log_degraded(void);
/* The first required feature that is missing, and a message that names the
 * kernel option or capability to check; TLS_FEAT__COUNT if none. */
enum tls_feat tls_features_required_missing(char *msg, size_t len);

/* "name: missing (stage: strerror)" or "name: in use", for logs and status. */
void tls_feature_describe(enum tls_feat f, char *buf, size_t len);
/* One line: the features found, then the missing ones with their errno
 * names, e.g. "btf sk_storage ... ; missing: sk_iter(EPERM)". */
void tls_features_summary(char *buf, size_t len);

#endif /* TLS_KERNEL_FEATURES_H */
