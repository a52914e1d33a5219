/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who may have processes scheduled: discovery's trust model. Pure (no I/O):
 * the caller reads /proc/PID/status and /proc/PID/cgroup, these parse and
 * decide.
 *
 * Any local user can start a process that a rule matches (an environment
 * variable is enough), and a scheduled job takes link share from every
 * other job. So a process is scheduled only if the administrator vouched
 * for it: its real uid is one of `users`, or its real gid or one of its
 * supplementary groups is one of `groups` (both: names or numbers); and, if
 * `cgroups` is set, it lives in one of those cgroup (v2) subtrees; and, with
 * `netns = "same"`, in tlsd's own network namespace. The default trusts
 * root's processes only, in any cgroup and network namespace: a PS host's
 * jobs are started by root (systemd units, a container runtime, an
 * orchestrator's agent), and an unprivileged user's processes are not
 * judged at all (nothing of theirs is read past /proc/PID/status).
 *
 * A cgroup entry is a path from the cgroup root ("/kubepods.slice" allows
 * that cgroup and everything below it, not "/kubepods.slicex"), or a
 * systemd slice unit ("ml-team.slice" is the path "/ml.slice/ml-team.slice",
 * as systemd nests slices by their dashes): never a bare name matched
 * anywhere, since a user may name a cgroup of their delegated subtree so.
 *
 * The real uid, not the effective one: a setuid program runs with its
 * caller's arguments and environment, which the rules read.
 */
#ifndef TLS_TRUST_H
#define TLS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TLS_TRUST_MAX_IDS     64
#define TLS_TRUST_MAX_CGROUPS 16
#define TLS_CGROUP_PATH_MAX   256
#define TLS_PROC_GROUPS_MAX   64 /* more supplementary groups: the rest unread */

/* Per-uid bounds (root's processes are not bounded: root configures tlsd). */
#define TLS_PS_PER_USER_DEFAULT	  64
#define TLS_JOBS_PER_USER_DEFAULT 16
#define TLS_PS_PER_USER_MAX	  1024 /* discovery follows at most so many PSes */
#define TLS_JOBS_PER_USER_MAX	  1024
/* Endpoints one uid's PSes feed the classifier: discovery's half of the map
 * (TLS_MEMBERS_MAX_DISC_ENDPOINTS) holds 8 users at the default. */
#define TLS_EPS_PER_USER_DEFAULT 4096
#define TLS_EPS_PER_USER_MAX	 32768

enum tls_trust_netns {
	TLS_TRUST_NETNS_ANY = 0, /* any network namespace (containers) */
	TLS_TRUST_NETNS_SAME,	 /* tlsd's own only */
};

struct tls_trust_conf {
	unsigned int nuids, ngids, ncgroups;
	uid_t uids[TLS_TRUST_MAX_IDS];
	gid_t gids[TLS_TRUST_MAX_IDS];
	char cgroups[TLS_TRUST_MAX_CGROUPS][TLS_CGROUP_PATH_MAX]; /* as paths */
	enum tls_trust_netns netns;
	unsigned int ps_per_user;   /* PS processes of one uid at once */
	unsigned int jobs_per_user; /* jobs whose PSes are one uid's */
	unsigned int endpoints_per_user; /* endpoints one uid's PSes hold */
};

/* The defaults: root only, any cgroup, any namespace, the bounds above. */
void tls_trust_default(struct tls_trust_conf *t);

/* What /proc/PID/status says of a process's identity. */
struct tls_proc_creds {
	uid_t uid; /* real */
	gid_t gid; /* real */
	unsigned int ngroups;
	gid_t groups[TLS_PROC_GROUPS_MAX];
};

/* /proc/PID/status (len bytes, need not be NUL-terminated): 0, or -EINVAL
 * if its Uid:, Gid: lines are missing or malformed. */
int tls_parse_proc_status(const char *buf, size_t len, struct tls_proc_creds *c);
/* /proc/PID/cgroup: the cgroup v2 path (the "0::" line) into path; 0, or
 * -ENOENT without one (a cgroup v1 host), -EINVAL if malformed or longer
 * than pathlen - 1. */
int tls_parse_proc_cgroup(const char *buf, size_t len, char *path, size_t pathlen);

/* A cgroups entry as a path: "/a/b" as it is (a trailing '/' dropped),
 * "x-y.slice" as "/x.slice/x-y.slice"; -EINVAL (with a reason) otherwise. */
int tls_trust_cgroup_path(const char *entry, char *path, size_t len, char *err, size_t errlen);
/* Is cgroup path p at or below allowed? */
bool tls_cgroup_under(const char *p, const char *allowed);

/* NULL if the process may be scheduled, else why not (a constant string).
 * cgroup: its v2 path, or NULL if unknown; other_netns: it lives in
 * another network namespace than tlsd. */
const char *tls_trust_check(const struct tls_trust_conf *t, const struct tls_proc_creds *c,
			    const char *cgroup, bool other_netns);

/* Does the check need the process's cgroup? (Not read otherwise.) */
static inline bool tls_trust_wants_cgroup(const struct tls_trust_conf *t)
{
	return t->ncgroups > 0;
}

#endif /* TLS_TRUST_H */
