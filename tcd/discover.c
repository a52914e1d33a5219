// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

#include <poll.h>
#include <sys/socket.h>


#include "discover.h"
#include "endpoint.h"
#include "kernel_features.h"
#include "clock.h"
#include "log.h"
#include "pidfd.h"
#include "proc_conn.h"
#include "proc_reader.h"
#include "procfs.h"
#include "sockdiag.h"

#define MAX_PS		  1024
#define MAX_PS_EPS	  256 /* endpoints one PS feeds the classifier */
#define MAX_PS_SOCKETS	  65536
#define MAX_NETNS	  64
/* The kernel bounds a process's arguments and environment together by a
 * quarter of its stack limit (2 MiB at the usual 8 MiB); a TF_CONFIG of a
 * big cluster runs long. Read whole up to this, only for trusted processes. */
#define CMDLINE_MAX	  (8u << 20)
#define ENVIRON_MAX	  (8u << 20)
#define FOREIGN_POLL_NS	  (100ULL * 1000 * 1000)
#define POLL_COST_RATIO	  100 /* a PS's socket listing: at most 1% of a core */
#define FULL_RESCAN_EVERY 10
#define WARN_UIDS	  64 /* users whose last warning is remembered */
#define WARN_EVERY_NS	  (60ULL * 1000 * 1000 * 1000)
/*
 * How long the loop waits for a trusted process's command line and
 * environment (proc_reader.h), and for all of them in one tick (one
 * tls_discover_run or rescan): a healthy process's take microseconds, a
 * few milliseconds at the 8 MiB bounds on a loaded host, so a read still
 * out after 100 ms is stalled, not slow; and 100 ms is what a tlsctl
 * request, a rotation or a heal may be held up by at worst.
 */
#define PROC_READ_DEADLINE_NS (100ULL * 1000 * 1000)
/* Processes whose judging waits for a read (late, refused, or the tick's
 * wait spent): judged again 100 ms later, then twice as late each time,
 * up to the rescan's period. So many at most, and so many of one user's
 * (root's: not bounded); past that, the rescans alone judge them again. */
#define LATE_MAX      64
#define LATE_PER_USER 8
#define LATE_RETRY_NS (100ULL * 1000 * 1000)
#define NO_UID	      ((uid_t)-1) /* warn_uid() of what is no user's */

static const uint64_t fast_polls_ns[] = { 0, 10000000ULL, 50000000ULL, 200000000ULL,
					  1000000000ULL };

enum sock_kind { SK_OTHER, SK_PENDING, SK_TCP };

/* What judging a process found: DEFERRED, not judged now (its read was
 * late or refused): judged again later, a known PS stays as it is. */
/* REJOIN: within consider() only, a known PS that joins another job. */
enum verdict { NOT_PS, IS_PS, DEFERRED, REJOIN };

struct late {
	pid_t pid;
	uid_t uid;
	unsigned int tries;
	uint64_t next_ns;
};

struct sockent {
	uint64_t inode; /* first: sorted and searched with cmp_u64 */
	uint8_t kind;
};

struct ps {
	pid_t pid;
	uid_t uid; /* real: whose process (trust.h) */
	int pidfd;
	uint64_t netns;
	bool foreign; /* another network namespace than tlsd's */
	char job[TLS_JOB_NAME_LEN];
	char rule[TLS_RULE_NAME_MAX];
	uint32_t id;
	uint64_t found_ns;
	unsigned int npolls;
	uint64_t next_poll_ns;
	unsigned int neps;
	struct tls_endpoint_key eps[MAX_PS_EPS];
	unsigned int nports;
	uint16_t ports[16];
	/* Its sockets as the last poll saw them, by inode (sorted): what kind
	 * each is, so that a poll dumps sock_diag only when a TCP socket came,
	 * went, or left the unconnected state (listen, connect). */
	struct sockent *ents;
	unsigned int nents;
	unsigned int pending; /* TCP sockets neither listening nor connected */
	unsigned int pending_polls; /* polls since its sockets last changed */
	uint64_t cost_ns;	    /* what listing its sockets took, last time */
	uint64_t earliest_ns;	    /* its next poll no sooner (the 1% bound) */
	bool dirty;	      /* a dump is due */
	/* Endpoints it wanted and did not get at its last poll: its user's
	 * share was held (short_share) or discovery's half of the map was
	 * full (short_map). Asked again when endpoints are let go. */
	bool short_share, short_map;
	bool warned_eps;      /* said once that MAX_PS_EPS was reached */
	/* Endpoints refused as another job's, each said once */
	unsigned int nrefused;
	struct tls_endpoint_key refused[8];
};

struct netns {
	uint64_t ino;
	struct tls_diag *diag; /* NULL: not opened (or could not be) */
};

struct tls_discover {
	struct tls_discovery_conf conf;
	struct tls_rules *rules;
	struct tls_members *mb; /* where PSes claim their pids and endpoints */
	struct tls_discover_hooks hooks;
	void *ctx;
	struct tls_pconn *pc;
	int epfd, tfd;
	uint64_t self_netns;
	uint64_t next_rescan_ns;
	bool quiet; /* letting go: no map writes, no hooks (tls_discover_release) */
	unsigned int nps;
	struct ps *ps[MAX_PS];
	unsigned int nns;
	struct netns ns[MAX_NETNS];
	/* Processes the last rescans judged no PS: skipped by the next ones
	 * (an exec, which could change that, arrives as an event and is judged
	 * then). Sorted; forgotten every FULL_RESCAN_EVERY rescans and when
	 * events were lost. */
	pid_t *nonps, *nonps_next;
	unsigned int nnonps, nnonps_next, nonps_cap;
	unsigned int rescans;
	struct {
		uid_t uid;
		const char *why; /* a constant: compared by address */
		uint64_t at;	 /* 0: free */
	} warned[WARN_UIDS];
	struct late late[LATE_MAX]; /* judged again at their next_ns */
	unsigned int nlate;
	uint64_t wait_left_ns; /* of this tick's PROC_READ_DEADLINE_NS */
	bool paused;	       /* said that reads are refused (proc_reader.h) */
	/* scratch */
	struct tls_sock *socks;
	unsigned int nsocks, socks_cap;
	int fds[MAX_PS_SOCKETS];
	uint64_t inodes[MAX_PS_SOCKETS];
};


static int find_ps(const struct tls_discover *d, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < d->nps; i++)
		if (d->ps[i]->pid == pid)
			return i;
	return -1;
}

/* Endpoint k is free: a PS it was refused to asks for it again at once. */
static void refused_free(struct tls_discover *d, const struct tls_endpoint_key *k)
{
	unsigned int i, r;

	for (i = 0; i < d->nps; i++)
		for (r = 0; r < d->ps[i]->nrefused; r++)
			if (!memcmp(&d->ps[i]->refused[r], k, sizeof(*k))) {
				d->ps[i]->dirty = true;
				d->ps[i]->next_poll_ns = 0;
			}
}

/* PSes short of endpoints that may now get them: uid's PSes held back by
 * their user's share (uid's PS let one go; NO_UID: every user's, after a
 * reload), and every PS the full map refused. Polled again, but no sooner
 * than the 1% bound allows: a user letting endpoints go and taking them
 * again in a loop costs another user's PS no more polls than that. */
static void short_wake(struct tls_discover *d, uid_t uid)
{
	unsigned int i;

	for (i = 0; i < d->nps; i++) {
		struct ps *q = d->ps[i];

		if (!q->short_map && !(q->short_share && (uid == NO_UID || q->uid == uid)))
			continue;
		q->dirty = true;
		if (q->next_poll_ns > q->earliest_ns)
			q->next_poll_ns = q->earliest_ns;
	}
}

/* p lets go of an endpoint (membership.h: it stays while another PS of the
 * job or the file holds it); when no PS holds it any more, those it was
 * refused to ask again. (Its callers wake the PSes short of endpoints,
 * short_wake(), once they have let go of all they drop.) */
static void drop_ep(struct tls_discover *d, struct ps *p, unsigned int e)
{
	if (!d->quiet &&
	    tls_members_del_endpoint(d->mb, TLS_HOLDER_DISCOVERY, p->id, &p->eps[e]) == 1)
		refused_free(d, &p->eps[e]);
	p->eps[e] = p->eps[--p->neps];
}

static void arm(struct tls_discover *d)
{
	struct itimerspec its = {};
	uint64_t next = d->next_rescan_ns;
	unsigned int i;

	for (i = 0; i < d->nps; i++)
		if (d->ps[i]->next_poll_ns < next)
			next = d->ps[i]->next_poll_ns;
	for (i = 0; i < d->nlate; i++)
		if (d->late[i].next_ns < next)
			next = d->late[i].next_ns;
	its.it_value.tv_sec = next / 1000000000ULL;
	its.it_value.tv_nsec = next % 1000000000ULL;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void schedule_poll(struct tls_discover *d, struct ps *p, uint64_t now)
{
	uint64_t soon = UINT64_MAX;

	if (p->npolls < sizeof(fast_polls_ns) / sizeof(fast_polls_ns[0]))
		p->next_poll_ns = p->found_ns + fast_polls_ns[p->npolls];
	else
		p->next_poll_ns = now + d->conf.rescan_ns;
	/* A PS in another namespace: its connections reach the classifier as
	 * endpoints only: look again soon. No sock_create hook: the PS's new
	 * sockets are tagged by the poll that sees them, so poll soon too. A
	 * socket not yet listening or connected, or a dump that failed: soon,
	 * then less and less often while nothing changes (a process may hold
	 * thousands of sockets it never connects). */
	if (p->foreign || p->dirty ||
	    tls_features()[TLS_FEAT_CGROUP_SOCK].state != TLS_FEAT_IN_USE)
		soon = FOREIGN_POLL_NS;
	else if (p->pending)
		soon = FOREIGN_POLL_NS << (p->pending_polls < 6 ? p->pending_polls : 6);
	if (soon != UINT64_MAX && p->next_poll_ns > now + soon)
		p->next_poll_ns = now + soon;
	/* At most 1% of a core per PS listing its sockets, however many it
	 * holds: its owner's choice costs nobody else more. */
	p->earliest_ns = now + POLL_COST_RATIO * p->cost_ns;
	if (p->next_poll_ns < p->earliest_ns)
		p->next_poll_ns = p->earliest_ns;
}

/* The PS is gone (exit, exec of something else, rules changed). */
static void forget(struct tls_discover *d, unsigned int i, const char *why)
{
	struct ps *p = d->ps[i];
	unsigned int k;
	bool last = true, had = p->neps > 0;

	while (p->neps)
		drop_ep(d, p, p->neps - 1);
	if (!d->quiet)
		tls_members_del_process(d->mb, TLS_HOLDER_DISCOVERY, p->id, p->pid);
	if (p->pidfd >= 0)
		close(p->pidfd); /* also leaves the epoll */
	d->ps[i] = d->ps[--d->nps];
	if (had && !d->quiet)
		short_wake(d, p->uid);
	for (k = 0; k < d->nps; k++)
		if (!strcmp(d->ps[k]->job, p->job))
			last = false;
	if (!d->quiet) {
		pr_info("PS pid %d of job %s %s\n", p->pid, p->job, why);
		if (last)
			d->hooks.job_down(d->ctx, p->job, p->id);
	}
	free(p->ents);
	free(p);
}

static bool exited(const struct ps *p)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

	return p->pidfd >= 0 && poll(&pfd, 1, 0) > 0;
}

/* A warning about uid's processes, at most one a minute per uid and
 * reason (a user who starts thousands of processes must not flood the log). */
static bool warn_uid(struct tls_discover *d, uid_t uid, const char *why, uint64_t now)
{
	unsigned int i, oldest = 0;

	for (i = 0; i < WARN_UIDS; i++) {
		if (d->warned[i].at && d->warned[i].uid == uid && d->warned[i].why == why) {
			if (now - d->warned[i].at < WARN_EVERY_NS)
				return false;
			d->warned[i].at = now;
			return true;
		}
		if (d->warned[i].at < d->warned[oldest].at)
			oldest = i;
	}
	d->warned[oldest].uid = uid;
	d->warned[oldest].why = why;
	d->warned[oldest].at = now;
	return true;
}

/* uid's PSes, and whether one of them is in job (and how many jobs they
 * make up, counting job as one more if none is). */
static unsigned int user_load(const struct tls_discover *d, uid_t uid, const char *job,
			      unsigned int *njobs)
{
	unsigned int i, k, nps = 0, nj = 0;
	bool in_job = false;

	for (i = 0; i < d->nps; i++) {
		const struct ps *p = d->ps[i];

		if (p->uid != uid)
			continue;
		nps++;
		in_job |= !strcmp(p->job, job);
		for (k = 0; k < i; k++)
			if (d->ps[k]->uid == uid && !strcmp(d->ps[k]->job, p->job))
				break;
		nj += k == i; /* its job's first PS in the table */
	}
	*njobs = nj + !in_job;
	return nps;
}

/* A PS of another user already in job (root's joins any job; a user's
 * joins only its own user's). */
static const struct ps *job_of_other(const struct tls_discover *d, uid_t uid, const char *job)
{
	unsigned int i;

	for (i = 0; uid && i < d->nps; i++)
		if (d->ps[i]->uid != uid && !strcmp(d->ps[i]->job, job))
			return d->ps[i];
	return NULL;
}

/*
 * May this process be scheduled (trust.h)? NULL if so, else why not. Only
 * /proc/PID/status (and cgroup, if asked for) is read: an untrusted user's
 * processes cost no command line or environment read.
 */
static const char *untrusted(struct tls_discover *d, pid_t pid, uid_t *uid, uint64_t *netns)
{
	const struct tls_trust_conf *t = &d->conf.trust;
	struct tls_proc_creds c;
	char buf[4096], cg[TLS_CGROUP_PATH_MAX];
	const char *cgroup = NULL;
	ssize_t n = tls_proc_read(pid, "status", buf, sizeof(buf));

	if (n < 0 || tls_parse_proc_status(buf, n, &c) || tls_proc_netns(pid, netns))
		return "gone";
	*uid = c.uid;
	if (tls_trust_wants_cgroup(t)) {
		n = tls_proc_read(pid, "cgroup", buf, sizeof(buf));
		if (n >= 0 && !tls_parse_proc_cgroup(buf, n, cg, sizeof(cg)))
			cgroup = cg;
	}
	return tls_trust_check(t, &c, cgroup, *netns != d->self_netns);
}

static struct late *find_late(struct tls_discover *d, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < d->nlate; i++)
		if (d->late[i].pid == pid)
			return &d->late[i];
	return NULL;
}

static unsigned int late_of(const struct tls_discover *d, uid_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < d->nlate; i++)
		n += d->late[i].uid == uid;
	return n;
}

/* pid could not be judged now: again LATE_RETRY_NS later, twice as late
 * at each try, as a PS's polls back off while its sockets stay pending;
 * never later than the rescan would judge it. */
static void defer(struct tls_discover *d, pid_t pid, uid_t uid, uint64_t now)
{
	struct late *l = find_late(d, pid);
	uint64_t wait;

	if (!l) {
		if (d->nlate == LATE_MAX || (uid && late_of(d, uid) >= LATE_PER_USER))
			return; /* the rescans judge it again */
		l = &d->late[d->nlate++];
		*l = (struct late){ .pid = pid, .uid = uid };
	}
	wait = LATE_RETRY_NS << (l->tries < 6 ? l->tries : 6);
	l->tries++;
	l->next_ns = now + (wait < d->conf.rescan_ns ? wait : d->conf.rescan_ns);
}

static void undefer(struct tls_discover *d, pid_t pid)
{
	struct late *l = find_late(d, pid);

	if (l)
		*l = d->late[--d->nlate];
}

/* Every read refused: one warning a minute names the stuck ones. */
static void pause_discovery(struct tls_discover *d, uint64_t now)
{
	static const char why[] = "paused";
	pid_t pids[TLS_PREAD_STUCK_MAX];
	unsigned int n = tls_pread_stuck(pids, TLS_PREAD_STUCK_MAX), i;
	char list[TLS_PREAD_STUCK_MAX * 12] = "";
	size_t off = 0;

	d->paused = true;
	if (!warn_uid(d, NO_UID, why, now))
		return;
	for (i = 0; i < n; i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%d", i ? " " : "", pids[i]);
	pr_warn("discovery paused: %u reads of /proc/PID/cmdline and environ are stuck (pids "
		"%s); no process is judged until one returns (said once a minute)\n",
		n, list);
}

/* Why a read did not answer, said where it must be. */
static void read_refused(struct tls_discover *d, pid_t pid, uid_t uid, int err, uint64_t now)
{
	static const char late[] = "late", noreader[] = "no reader";

	switch (err) {
	case -ETIMEDOUT:
		if (warn_uid(d, uid, late, now))
			pr_warn("pid %d (uid %u): its command line and environment were not read "
				"within %llu ms (its memory stalled?); judged again later, the read "
				"left to finish on its own (said once a minute per user)\n",
				pid, (unsigned int)uid,
				(unsigned long long)(PROC_READ_DEADLINE_NS / 1000000));
		break;
	case -ENOSPC:
		pause_discovery(d, now);
		break;
	case -EBUSY: /* its last read is still stuck */
		break;
	default:
		if (warn_uid(d, NO_UID, noreader, now))
			pr_warn("discovery: no /proc reader thread: %s; processes are judged "
				"again later (said once a minute)\n",
				strerror(-err));
	}
}

/*
 * The command line and environment of a trusted process, read off the
 * loop (proc_reader.h), waiting at most PROC_READ_DEADLINE_NS and what is
 * left of this tick's. 0 with *cl and *el (each a length or -errno) and
 * info's fields, valid until the next read; -EAGAIN: not read now (pid is
 * judged again later).
 */
static int read_mm(struct tls_discover *d, pid_t pid, uid_t uid, struct tls_proc_info *info,
		   ssize_t *cl, ssize_t *el, uint64_t now)
{
	struct tls_pread q = { .pid = pid, .nfiles = 2, .max = { CMDLINE_MAX, ENVIRON_MAX } };
	uint64_t wait =
		d->wait_left_ns < PROC_READ_DEADLINE_NS ? d->wait_left_ns : PROC_READ_DEADLINE_NS;
	uint64_t t0 = tls_now_ns(), waited;
	int err = 0;

	snprintf(q.path[0], sizeof(q.path[0]), "/proc/%d/cmdline", (int)pid);
	snprintf(q.path[1], sizeof(q.path[1]), "/proc/%d/environ", (int)pid);
	if (wait) { /* else this tick's wait is spent: the next tick's turn */
		err = tls_pread(&q, wait);
		waited = tls_now_ns() - t0;
		d->wait_left_ns -= waited < d->wait_left_ns ? waited : d->wait_left_ns;
	}
	if (!wait || err) {
		if (err)
			read_refused(d, pid, uid, err, now);
		defer(d, pid, uid, now);
		return -EAGAIN;
	}
	if (d->paused) {
		pr_info("discovery resumed: a stuck /proc read returned\n");
		d->paused = false;
	}
	*cl = q.len[0];
	*el = q.len[1];
	info->cmdline = q.buf[0];
	info->cmdline_len = *cl > 0 ? (size_t)*cl : 0;
	info->environ = q.buf[1];
	info->environ_len = *el > 0 ? (size_t)*el : 0;
	return 0;
}

/*
 * consider(), step 1: the process's pidfd and its trust. The pidfd comes
 * first: whatever /proc says afterwards is this process's if it has not
 * exited once the reads are done (a pid reused in between would pass
 * another process's identity off as this one's). A known pid whose process
 * is gone (its pidfd says so, even if the exit event is still queued) is a
 * new process: pid reuse (*idx becomes -1). The pidfd, or -1: not a PS
 * (gone, a thread, not trusted; a known PS no longer trusted is forgotten).
 */
static int identify(struct tls_discover *d, pid_t pid, int *idx, uid_t *uid, uint64_t *netns)
{
	const char *why;
	int pidfd;

	if (*idx >= 0 && exited(d->ps[*idx])) {
		forget(d, *idx, "exited");
		*idx = -1;
	}
	pidfd = *idx >= 0 ? dup(d->ps[*idx]->pidfd) : (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1; /* gone, or a pid that is no process (a thread) */
	why = untrusted(d, pid, uid, netns);
	if (!why)
		return pidfd;
	if (*idx >= 0 && strcmp(why, "gone")) {
		char msg[160];

		snprintf(msg, sizeof(msg), "is no longer trusted: %s", why);
		forget(d, *idx, msg); /* its credentials changed */
	} else if (strcmp(why, "gone")) {
		pr_debug("pid %d (uid %u): not judged: %s\n", pid, (unsigned int)*uid, why);
	}
	close(pidfd);
	return -1;
}

/* A wrapper (nsenter, ip netns exec) moved a known PS to another network
 * namespace before its exec: its sockets are read there from now on. */
static void moved_netns(struct tls_discover *d, struct ps *p, uint64_t netns, uint64_t now)
{
	while (p->neps)
		drop_ep(d, p, p->neps - 1);
	p->netns = netns;
	p->foreign = netns != d->self_netns;
	p->nents = 0;
	p->npolls = 0;
	p->found_ns = now;
	schedule_poll(d, p, now);
	arm(d);
}

/*
 * consider(), step 3 for a known PS, judged again (matched: the rules gave
 * job): the same job stays (IS_PS); otherwise it is forgotten, and NOT_PS
 * unless it matched another job, which it joins as a new PS: REJOIN then
 * (the caller opens a new pidfd). *pidfd is closed in every case.
 */
static enum verdict rejudge_known(struct tls_discover *d, int idx, bool matched, const char *job,
				  uid_t uid, uint64_t netns, uint64_t now, int *pidfd)
{
	struct ps *p = d->ps[idx];
	char msg[80];

	close(*pidfd);
	*pidfd = -1;
	/* Its user changed (a root launcher that dropped to a user's
	 * credentials, then exec'd): the PS is that user's now, under that
	 * user's bounds, admitted again as a new one. Kept as it was, a
	 * user's PS stayed root's, outside every per-user bound. */
	if (uid != p->uid) {
		snprintf(msg, sizeof(msg), "changed its user (uid %u, was %u)", (unsigned int)uid,
			 (unsigned int)p->uid);
		forget(d, idx, msg);
		return matched ? REJOIN : NOT_PS;
	}
	if (matched && !strcmp(job, p->job)) {
		if (netns != p->netns)
			moved_netns(d, p, netns, now);
		return IS_PS;
	}
	forget(d, idx, matched ? "moves to another job" : "is no PS any more");
	return matched ? REJOIN : NOT_PS;
}

/*
 * consider(), step 4: the bounds, tlsd's table and each user's share of
 * it. A refused one is judged again at a later rescan (when the user has
 * room); said once a minute per user and reason. true: admitted.
 */
static bool admit(struct tls_discover *d, pid_t pid, uid_t uid, const char *job, uint64_t now)
{
	unsigned int njobs, nps = user_load(d, uid, job, &njobs);
	const struct ps *other = job_of_other(d, uid, job);
	const char *why =
		d->nps >= MAX_PS			? "tlsd follows no more PS processes" :
		other					? "its job is another user's" :
		uid && nps >= d->conf.trust.ps_per_user ? "its user has discovery.limits.ps_per_user PSes" :
		uid && njobs > d->conf.trust.jobs_per_user ?
							  "its user has discovery.limits.jobs_per_user jobs" :
							  NULL;

	if (!why)
		return true;
	if (warn_uid(d, uid, why, now))
		pr_warn("PS pid %d (uid %u, job %s) not scheduled: %s%s (said once a minute per "
			"user and reason)\n",
			pid, (unsigned int)uid, job, why,
			other ? (other->uid ? "" : " (root's)") : "");
	return false;
}

/*
 * consider(), step 5: a new PS joins its job (the daemon's hook gives the
 * id), the classifier (its sockets tagged), and the epoll (its exit as an
 * event: the pidfd turns readable). Takes pidfd in every case.
 */
static enum verdict join(struct tls_discover *d, pid_t pid, uid_t uid, int pidfd, uint64_t netns,
			 const char *job, const char *rule, uint64_t now)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)pid << 1 | 1 };
	char comm[32] = "";
	struct ps *p;
	int err;

	tls_proc_read(pid, "comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(pidfd);
		return NOT_PS; /* judged again at the next rescan */
	}
	p->pid = pid;
	p->uid = uid;
	p->pidfd = pidfd;
	p->netns = netns;
	p->foreign = netns != d->self_netns;
	snprintf(p->job, sizeof(p->job), "%s", job);
	snprintf(p->rule, sizeof(p->rule), "%s", rule);
	p->found_ns = now;
	p->id = d->hooks.job_up(d->ctx, job, rule, uid);
	if (!p->id) {
		/* refused (and said why) or no room: judged again at a full
		 * rescan, not at every one */
		close(p->pidfd);
		free(p);
		return NOT_PS;
	}
	err = tls_members_add_process(d->mb, TLS_HOLDER_DISCOVERY, p->id, pid);
	if (err < 0) {
		pr_warn("PS pid %d of job %s: cannot join the classifier: %s\n", pid, job,
			strerror(-err));
		close(p->pidfd);
		d->ps[d->nps++] = p; /* so that forget() handles the job */
		p->pidfd = -1;
		forget(d, d->nps - 1, "dropped");
		return IS_PS;
	}
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, p->pidfd, &ev))
		pr_warn("PS pid %d: its exit is found by the rescan only: %s\n", pid,
			strerror(errno));
	d->ps[d->nps++] = p;
	schedule_poll(d, p, now);
	pr_info("PS pid %d (%s, uid %u) found by rule %s: job %s (id %u)%s, %d sockets\n", pid,
		comm, (unsigned int)uid, rule, job, p->id,
		p->foreign ? ", in its own network namespace" : "", err);
	return IS_PS;
}

/*
 * Judge one process by the trust model and the rules; a new PS joins its
 * job. NOT_PS also when it is gone. The steps: its pidfd and trust
 * (identify), its command line and environment off the loop (read_mm),
 * the rules, a known PS judged again (rejudge_known), the bounds (admit),
 * and a new PS's joining (join).
 */
static enum verdict consider(struct tls_discover *d, pid_t pid, uint64_t now)
{
	struct tls_proc_info info = { .pid = pid, .comm = "" }; /* the rules do not look */
	char job[TLS_JOB_NAME_LEN];
	const char *rule = NULL;
	int idx = find_ps(d, pid), pidfd, matched;
	enum verdict v;
	ssize_t cl, el;
	uint64_t netns, netns2;
	uid_t uid = 0, uid2 = 0;

	pidfd = identify(d, pid, &idx, &uid, &netns);
	if (pidfd < 0)
		return NOT_PS;
	if (read_mm(d, pid, uid, &info, &cl, &el, now)) {
		close(pidfd);
		return DEFERRED; /* a known PS stays as it is meanwhile */
	}
	if (cl < 0 || el < 0 || poll(&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1, 0) > 0) {
		/* gone already, or a kernel thread */
		if (idx >= 0 && (cl == -ENOENT || cl == -ESRCH || cl >= 0))
			forget(d, idx, "exited");
		close(pidfd);
		return NOT_PS;
	}
	matched = tls_rules_match(d->rules, &info, &rule, job, sizeof(job));
	/* The user again, after the reads: a process that changed its
	 * credentials between the status read and these (a root launcher
	 * dropping to a user, then exec'ing the PS: setpriv, su, runuser)
	 * showed the PS's command line and environment under root's uid,
	 * and its user's PS passed as root's. Judged again later. */
	if (untrusted(d, pid, &uid2, &netns2) || uid2 != uid) {
		close(pidfd);
		defer(d, pid, uid2, now);
		return DEFERRED;
	}
	if (idx >= 0) {
		v = rejudge_known(d, idx, matched, job, uid, netns, now, &pidfd);
		if (v != REJOIN)
			return v;
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0)
			return NOT_PS;
	} else if (!matched) {
		close(pidfd);
		return NOT_PS;
	}
	if (!admit(d, pid, uid, job, now)) {
		close(pidfd);
		return NOT_PS;
	}
	return join(d, pid, uid, pidfd, netns, job, rule, now);
}

/* consider(), and its place among the late ones kept up to date. */
static enum verdict judge(struct tls_discover *d, pid_t pid, uint64_t now)
{
	enum verdict v = consider(d, pid, now);

	if (v != DEFERRED)
		undefer(d, pid);
	return v;
}

/* Those whose judging was deferred and is due. */
static void judge_late(struct tls_discover *d, uint64_t now)
{
	pid_t due[LATE_MAX];
	unsigned int i, n = 0;

	for (i = 0; i < d->nlate; i++)
		if (d->late[i].next_ns <= now)
			due[n++] = d->late[i].pid;
	for (i = 0; i < n; i++)
		judge(d, due[i], now);
}

/* Deferred, and judged later than now: the rescan leaves it to its turn. */
static bool late_not_due(struct tls_discover *d, pid_t pid, uint64_t now)
{
	const struct late *l = d->nlate ? find_late(d, pid) : NULL;

	return l && l->next_ns > now;
}

static void on_exec(pid_t tgid, void *ctx)
{
	judge(ctx, tgid, tls_now_ns());
}

/* The sock_diag handle of the PS's namespace, opened through its pidfd
 * (no /proc path to race with); NULL if that fails, tried again next time. */
static struct netns *netns_of(struct tls_discover *d, const struct ps *p)
{
	unsigned int i;
	int err;

	for (i = 0; i < d->nns; i++)
		if (d->ns[i].ino == p->netns)
			return &d->ns[i];
	if (d->nns >= MAX_NETNS) {
		pr_warn("PS pid %d: more than %d network namespaces with PSes; its sockets are "
			"not read\n",
			p->pid, MAX_NETNS);
		return NULL;
	}
	err = tls_diag_open(p->foreign ? p->pidfd : -1, &d->ns[d->nns].diag);
	if (err) {
		pr_warn("PS pid %d: no sock_diag in its network namespace: %s\n", p->pid,
			strerror(-err));
		return NULL;
	}
	d->ns[d->nns].ino = p->netns;
	return &d->ns[d->nns++];
}

static void drop_netns(struct tls_discover *d, struct netns *ns)
{
	tls_diag_close(ns->diag);
	*ns = d->ns[--d->nns];
}

/* Namespaces no PS uses any more. */
static void prune_netns(struct tls_discover *d)
{
	unsigned int i, k;

	for (i = 0; i < d->nns;) {
		bool used = false;

		for (k = 0; k < d->nps && !used; k++)
			used = d->ps[k]->netns == d->ns[i].ino;
		if (used) {
			i++;
			continue;
		}
		drop_netns(d, &d->ns[i]);
	}
}

static void collect(const struct tls_sock *s, void *ctx)
{
	struct tls_discover *d = ctx;

	if (d->nsocks == d->socks_cap) {
		unsigned int cap = d->socks_cap ? d->socks_cap * 2 : 256;
		struct tls_sock *n = realloc(d->socks, cap * sizeof(*n));

		if (!n)
			return;
		d->socks = n;
		d->socks_cap = cap;
	}
	d->socks[d->nsocks++] = *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_any(const struct tls_sock *s)
{
	static const uint8_t zero[16];

	return !memcmp(s->saddr, zero, s->family == AF_INET6 ? 16 : 4);
}

/* An endpoint key for a socket's local side; a v4-mapped IPv6 address is
 * the IPv4 packet it really sends. */
static void ep_key(const struct tls_sock *s, bool any, int family, struct tls_endpoint_key *k)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(k, 0, sizeof(*k));
	k->proto = IPPROTO_TCP;
	k->port = htons(s->sport);
	k->family = family;
	if (any)
		return;
	if (s->family == AF_INET6 && !memcmp(s->saddr, mapped, 12)) {
		k->family = AF_INET;
		memcpy(k->addr, s->saddr + 12, 4);
	} else {
		memcpy(k->addr, s->saddr, family == AF_INET6 ? 16 : 4);
	}
}

static void want(struct tls_endpoint_key *want, unsigned int *n, const struct tls_endpoint_key *k)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (!memcmp(&want[i], k, sizeof(*k)))
			return;
	if (*n < MAX_PS_EPS)
		want[(*n)++] = *k;
}

/* Whether this is the first time p's endpoint k is refused (each is said
 * once; past the list's room, none more). */
static bool first_refusal(struct ps *p, const struct tls_endpoint_key *k)
{
	unsigned int i;

	for (i = 0; i < p->nrefused; i++)
		if (!memcmp(&p->refused[i], k, sizeof(*k)))
			return false;
	if (p->nrefused == sizeof(p->refused) / sizeof(p->refused[0]))
		return false;
	p->refused[p->nrefused++] = *k;
	return true;
}

/* Match the namespace's sockets (d->socks) to the PS's socket inodes. */
_Static_assert(TLS_EPS_PER_USER_MAX == TLS_MEMBERS_MAX_DISC_ENDPOINTS,
	       "one user may hold at most discovery's whole half of the endpoints");

/* Endpoints uid's PSes hold. */
static unsigned int user_eps(const struct tls_discover *d, uid_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < d->nps; i++)
		if (d->ps[i]->uid == uid)
			n += d->ps[i]->neps;
	return n;
}

/* p may claim one more endpoint: its user's PSes hold fewer than
 * discovery.limits.endpoints_per_user (root's are not bounded). Discovery's
 * half of the map is shared by all users: without a share each, two users
 * at the other limits' defaults (64 PSes x 256 endpoints) filled it and
 * every other user's PS got none. Refusals said once a minute per user. */
static bool eps_allowed(struct tls_discover *d, const struct ps *p, unsigned int held,
			uint64_t now)
{
	static const char why[] = "endpoints_per_user";

	if (!p->uid || held < d->conf.trust.endpoints_per_user)
		return true;
	if (warn_uid(d, p->uid, why, now))
		pr_warn("PS pid %d (uid %u) of job %s: its user's PSes hold "
			"discovery.limits.endpoints_per_user (%u) endpoints; the rest are not "
			"classified by endpoint (said once a minute per user)\n",
			p->pid, (unsigned int)p->uid, p->job, d->conf.trust.endpoints_per_user);
	return false;
}

/* No room in discovery's half of the endpoint map (or its write failed). */
static void eps_refused(struct tls_discover *d, const struct ps *p,
			const struct tls_endpoint_key *k, int err, uint64_t now)
{
	static const char why[] = "endpoint map";
	char ep[64];

	if (!warn_uid(d, NO_UID, why, now))
		return;
	tls_endpoint_format(k, ep, sizeof(ep));
	if (err == -ENOSPC)
		pr_warn("PS pid %d (uid %u) of job %s: endpoint %s: discovery's share of the "
			"endpoint map (%u) is full; not classified by endpoint (said once a "
			"minute)\n",
			p->pid, (unsigned int)p->uid, p->job, ep,
			(unsigned int)TLS_MEMBERS_MAX_DISC_ENDPOINTS);
	else
		pr_warn("PS pid %d of job %s: endpoint %s: cannot be added: %s (said once a "
			"minute)\n",
			p->pid, p->job, ep, strerror(-err));
}

static void poll_sockets(struct tls_discover *d, struct ps *p, uint64_t now)
{
	static struct tls_endpoint_key w[MAX_PS_EPS];
	uint16_t ports[16];
	unsigned int nw = 0, np = 0, i, e, held, had;
	bool changed;

	/* p->ents: its sockets as check_sockets() just listed them */
	for (i = 0; i < d->nsocks; i++) {
		const struct tls_sock *s = &d->socks[i];
		struct tls_endpoint_key k;
		struct sockent *ent =
			bsearch(&s->inode, p->ents, p->nents, sizeof(p->ents[0]), cmp_u64);

		if (!ent)
			continue;
		if (ent->kind == SK_PENDING) {
			ent->kind = SK_TCP; /* listening or connected now */
			p->pending--;
		}
		if (s->state == TCP_LISTEN) {
			for (e = 0; e < np && ports[e] != s->sport; e++)
				;
			if (e == np && np < 16)
				ports[np++] = s->sport;
			if (is_any(s)) {
				if (p->foreign)
					continue; /* its connections below */
				ep_key(s, true, AF_INET, &k);
				want(w, &nw, &k);
				if (s->family == AF_INET6) {
					ep_key(s, true, AF_INET6, &k);
					want(w, &nw, &k);
				}
			} else {
				ep_key(s, false, s->family, &k);
				want(w, &nw, &k);
			}
		} else if (p->foreign) {
			ep_key(s, false, s->family, &k);
			want(w, &nw, &k);
		}
	}
	/* endpoints gone */
	had = p->neps;
	for (e = 0; e < p->neps;) {
		for (i = 0; i < nw && memcmp(&w[i], &p->eps[e], sizeof(w[i])); i++)
			;
		if (i == nw)
			drop_ep(d, p, e);
		else
			e++;
	}
	if (p->neps < had && !d->quiet)
		short_wake(d, p->uid);
	/* endpoints new */
	held = p->uid ? user_eps(d, p->uid) : 0;
	p->short_share = p->short_map = false;
	for (i = 0; i < nw; i++) {
		struct tls_endpoint_key any;
		__u32 holder = 0;
		int ret = 0;

		for (e = 0; e < p->neps && memcmp(&w[i], &p->eps[e], sizeof(w[i])); e++)
			;
		if (e < p->neps)
			continue;
		if (p->neps >= MAX_PS_EPS) {
			if (!p->warned_eps)
				pr_warn("PS pid %d of job %s: more than %d endpoints; the rest are "
					"not classified by endpoint\n",
					p->pid, p->job, MAX_PS_EPS);
			p->warned_eps = true;
			break;
		}
		/* Another job's already (membership.h's rule): a static job
		 * of the file (the claim is kept, in force if the file lets
		 * go), another PS's listener (refused), or (any) the job
		 * holding the port on every address (refused). An exact
		 * endpoint on that port would take the holder's traffic,
		 * since the classifier prefers exact keys, and any local user
		 * can make one (its own network namespace, the host's
		 * address). Left to the holder, said once. */
		any = w[i];
		memset(any.addr, 0, sizeof(any.addr));
		if (memcmp(&any, &w[i], sizeof(any))) {
			holder = tls_members_endpoint_job(d->mb, &any);
			/* The file's claim: the endpoint is recorded, shadowed
			 * (membership.h), so that it comes back when the file
			 * lets the port go; refused, it was never asked for
			 * again (the file claims first at every start). */
			if (holder == p->id || holder == tls_members_endpoint_config_job(d->mb, &any))
				holder = 0;
		}
		if (!holder) {
			if (!eps_allowed(d, p, held, now)) {
				p->short_share = true;
				break;
			}
			ret = tls_members_add_endpoint(d->mb, TLS_HOLDER_DISCOVERY, p->id, &w[i],
						       &holder);
			if (ret >= 0) {
				p->eps[p->neps++] = w[i];
				held++;
			} else if (ret != -EBUSY) {
				p->short_map |= ret == -ENOSPC;
				eps_refused(d, p, &w[i], ret, now);
			}
		}
		if (holder && first_refusal(p, &w[i])) {
			char ep[64];

			tls_endpoint_format(&w[i], ep, sizeof(ep));
			pr_warn("PS pid %d of job %s: endpoint %s is on a port job id %u holds; "
				"left to it\n",
				p->pid, p->job, ep, holder);
		}
	}
	/* ascending, so that the log and tlsctl read the same every time */
	for (i = 1; i < np; i++)
		for (e = i; e > 0 && ports[e - 1] > ports[e]; e--) {
			uint16_t t = ports[e];

			ports[e] = ports[e - 1];
			ports[e - 1] = t;
		}
	changed = np != p->nports || memcmp(ports, p->ports, np * sizeof(ports[0]));
	if (changed) {
		char list[16 * 7] = "";
		size_t off = 0;

		for (i = 0; i < np; i++)
			off += snprintf(list + off, sizeof(list) - off, "%s%u", i ? "," : "",
					ports[i]);
		memcpy(p->ports, ports, sizeof(ports));
		p->nports = np;
		pr_info("PS pid %d of job %s: listening on %s\n", p->pid, p->job,
			np ? list : "no port");
	}
}

/* What kind of socket the PS's fd is: a copy of it through the pidfd,
 * asked. A copy that cannot be had counts as TCP: a dump then decides.
 * Without the cgroup sock_create hook (kernel_features.h) nothing tags a socket the
 * PS opens after it joined: an INET one is tagged here, at the poll that
 * first sees it. */
static enum sock_kind sock_kind(const struct tls_discover *d, const struct ps *p, int fd)
{
	int c = syscall(SYS_pidfd_getfd, p->pidfd, fd, 0), v = 0;
	socklen_t len = sizeof(v);
	struct tcp_info ti;
	enum sock_kind k = SK_TCP;

	if (c < 0)
		return SK_TCP;
	if (getsockopt(c, SOL_SOCKET, SO_DOMAIN, &v, &len) || (v != AF_INET && v != AF_INET6)) {
		k = SK_OTHER;
	} else {
		if (!d->quiet && tls_features()[TLS_FEAT_CGROUP_SOCK].state != TLS_FEAT_IN_USE)
			tls_members_tag_socket(d->mb, p->pid, c);
		len = sizeof(v);
		if (getsockopt(c, SOL_SOCKET, SO_PROTOCOL, &v, &len) || v != IPPROTO_TCP) {
			k = SK_OTHER;
		} else {
			len = sizeof(ti);
			if (!getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
			    ti.tcpi_state == TCP_CLOSE)
				k = SK_PENDING;
		}
	}
	close(c);
	return k;
}

/*
 * The PS's sockets now against the last poll: p->dirty if a dump is due (a
 * TCP socket came or went). Each socket is asked what it is once, when it
 * is new; one that was neither listening nor connected then (pending) is
 * not asked again: the dumps, which cost the same however many sockets the
 * PS holds, say when it listens or connects (poll_sockets).
 */
static void check_sockets(struct tls_discover *d, struct ps *p)
{
	uint64_t t0 = tls_now_ns();
	int n = tls_proc_sockets(p->pid, d->fds, d->inodes, MAX_PS_SOCKETS), i;
	struct sockent *now;
	unsigned int k, tcp_before = 0, tcp_kept = 0;
	bool fresh = false;

	if (n < 0)
		return; /* exiting: the pidfd will say so */
	now = malloc((n ? n : 1) * sizeof(*now));
	if (!now) {
		p->dirty = true;
		return;
	}
	for (k = 0; k < p->nents; k++)
		tcp_before += p->ents[k].kind == SK_TCP;
	p->pending = 0;
	for (i = 0; i < n; i++) {
		struct sockent key = { .inode = d->inodes[i] };
		struct sockent *old = bsearch(&key, p->ents, p->nents, sizeof(key), cmp_u64);

		now[i].inode = d->inodes[i];
		if (old) {
			now[i].kind = old->kind;
		} else {
			fresh = true;
			now[i].kind = sock_kind(d, p, d->fds[i]);
			if (now[i].kind == SK_TCP)
				p->dirty = true; /* new, listening or connected */
		}
		tcp_kept += old && old->kind == SK_TCP;
		p->pending += now[i].kind == SK_PENDING;
	}
	if (tcp_kept != tcp_before)
		p->dirty = true; /* TCP sockets closed */
	/* pending ones: a dump says whether they listen or connect now */
	p->pending_polls = fresh ? 0 : p->pending_polls + 1;
	if (p->pending)
		p->dirty = true;
	qsort(now, n, sizeof(*now), cmp_u64);
	free(p->ents);
	p->ents = now;
	p->nents = n;
	p->cost_ns = tls_now_ns() - t0;
}

/*
 * Every due PS whose TCP sockets changed since its last poll; one sock_diag
 * dump per namespace. A dump walks the kernel's whole TCP hash (about a
 * millisecond on a big host) unless it asks for listeners only, which is
 * all a PS in tlsd's own namespace needs (its connections carry their job
 * in socket storage); connections are asked for only for a PS in another
 * namespace. A failed dump changes nothing and is tried again.
 */
static void poll_due(struct tls_discover *d, uint64_t now)
{
	unsigned int i, k;

	for (i = 0; i < d->nps; i++) {
		struct ps *p = d->ps[i];

		if (p->next_poll_ns > now)
			continue;
		check_sockets(d, p);
		if (!p->npolls)
			p->dirty = true; /* the first poll logs the ports */
		if (!p->dirty) {
			p->npolls++;
			schedule_poll(d, p, now);
		}
	}
	for (i = 0; i < d->nps; i++) {
		struct ps *p = d->ps[i];
		bool foreign = false, ok;
		struct netns *ns;

		if (!p->dirty || p->next_poll_ns > now)
			continue;
		for (k = i; k < d->nps; k++)
			if (d->ps[k]->dirty && d->ps[k]->netns == p->netns)
				foreign |= d->ps[k]->foreign;
		ns = netns_of(d, p);
		d->nsocks = 0;
		ok = ns && !tls_diag_dump(ns->diag, !foreign, collect, d);
		if (ns && !ok) {
			pr_warn("PS pid %d: sock_diag dump failed; trying again\n", p->pid);
			drop_netns(d, ns); /* a fresh socket next time */
		}
		/* every changed PS of this namespace shares the dump */
		for (k = i; k < d->nps; k++) {
			struct ps *q = d->ps[k];

			if (!q->dirty || q->netns != p->netns || q->next_poll_ns > now)
				continue;
			if (ok) {
				poll_sockets(d, q, now);
				q->dirty = false;
			}
			q->npolls++;
			schedule_poll(d, q, now);
		}
	}
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static void remember_nonps(struct tls_discover *d, pid_t pid)
{
	if (d->nnonps_next == d->nonps_cap) {
		unsigned int cap = d->nonps_cap ? 2 * d->nonps_cap : 1024;
		pid_t *a = realloc(d->nonps, cap * sizeof(pid_t));
		pid_t *b = a ? realloc(d->nonps_next, cap * sizeof(pid_t)) : NULL;

		if (a)
			d->nonps = a;
		if (!b)
			return; /* judged again next time: only slower */
		d->nonps_next = b;
		d->nonps_cap = cap;
	}
	d->nonps_next[d->nnonps_next++] = pid;
}

static void rescan(struct tls_discover *d)
{
	uint64_t now = tls_now_ns();
	struct dirent *de;
	DIR *dir = opendir("/proc");
	unsigned int i;

	/* PSes gone without an event (cannot happen with pidfds, but cheap) */
	for (i = 0; i < d->nps;) {
		if (kill(d->ps[i]->pid, 0) && errno == ESRCH)
			forget(d, i, "exited");
		else
			i++;
	}
	/* Without exec events the cache would hide an exec in place. */
	if (++d->rescans % FULL_RESCAN_EVERY == 0 || !d->pc)
		d->nnonps = 0;
	d->nnonps_next = 0;
	while (dir && (de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid() || late_not_due(d, pid, now))
			continue;
		/* a deferred one is not cached: judged again until it is */
		if ((find_ps(d, pid) < 0 &&
		     bsearch(&(pid_t){ pid }, d->nonps, d->nnonps, sizeof(pid_t), cmp_pid)) ||
		    judge(d, pid, now) == NOT_PS)
			remember_nonps(d, pid);
	}
	if (dir)
		closedir(dir);
	/* this scan's list for the next */
	qsort(d->nonps_next, d->nnonps_next, sizeof(pid_t), cmp_pid);
	{
		pid_t *t = d->nonps;

		d->nonps = d->nonps_next;
		d->nnonps = d->nnonps_next;
		d->nonps_next = t;
	}
	for (i = 0; i < d->nps; i++)
		if (!d->ps[i]->npolls && d->ps[i]->next_poll_ns > now)
			d->ps[i]->next_poll_ns = now; /* ports at once, for the start log */
	poll_due(d, now);
	prune_netns(d);
	d->next_rescan_ns = now + d->conf.rescan_ns;
	arm(d);
}

/* A tick: the loop waits for /proc reads at most PROC_READ_DEADLINE_NS in
 * all (however many processes it judges), not that much for each. */
static void tick(struct tls_discover *d)
{
	d->wait_left_ns = PROC_READ_DEADLINE_NS;
}

void tls_discover_rescan(struct tls_discover *d)
{
	tick(d);
	rescan(d);
}

void tls_discover_run(struct tls_discover *d)
{
	struct epoll_event ev[16];
	int n, i;

	tick(d);
	n = epoll_wait(d->epfd, ev, 16, 0);
	for (i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag & 1) { /* a PS's pidfd */
			int idx = find_ps(d, (pid_t)(tag >> 1));

			if (idx >= 0)
				forget(d, idx, "exited");
		} else if (tag == 2) { /* the proc connector */
			if (tls_pconn_read(d->pc, on_exec, d) == -ENOBUFS) {
				pr_info("proc connector overflowed: rescanning /proc\n");
				d->next_rescan_ns = 0;
				d->nnonps = 0; /* execs were missed: judge all again */
			}
		} else if (tag == 4) { /* the timer */
			uint64_t x;

			if (read(d->tfd, &x, sizeof(x)) < 0)
				continue;
		}
	}
	judge_late(d, tls_now_ns());
	if (tls_now_ns() >= d->next_rescan_ns) {
		rescan(d); /* polls and arms too */
		return;
	}
	poll_due(d, tls_now_ns());
	prune_netns(d);
	arm(d);
}

int tls_discover_fd(const struct tls_discover *d)
{
	return d->epfd;
}

int tls_discover_set_conf(struct tls_discover *d, const struct tls_discovery_conf *conf)
{
	struct tls_rules *r;
	char err[256];
	int ret = tls_rules_compile(conf, &r, err, sizeof(err));

	if (ret) {
		pr_warn("discovery: %s\n", err);
		return ret;
	}
	tls_rules_free(d->rules);
	d->rules = r;
	d->conf = *conf;
	d->nnonps = 0; /* new rules: every process is judged again */
	short_wake(d, NO_UID); /* the share may have grown */
	tls_discover_rescan(d);
	return 0;
}

int tls_discover_job_info(const struct tls_discover *d, const char *job,
			  struct tls_discover_job *info)
{
	unsigned int i, k, e;
	bool found = false;

	memset(info, 0, sizeof(*info));
	for (i = 0; i < d->nps; i++) {
		const struct ps *p = d->ps[i];

		if (strcmp(p->job, job))
			continue;
		found = true;
		snprintf(info->rule, sizeof(info->rule), "%s", p->rule);
		if (info->npids < 16)
			info->pids[info->npids++] = p->pid;
		for (k = 0; k < p->nports; k++) {
			for (e = 0; e < info->nports && info->ports[e] != p->ports[k]; e++)
				;
			if (e == info->nports && info->nports < 16)
				info->ports[info->nports++] = p->ports[k];
		}
	}
	return found ? 0 : -ENOENT;
}

int tls_discover_new(const struct tls_discovery_conf *conf, struct tls_members *mb,
		     const struct tls_discover_hooks *hooks, void *ctx, struct tls_discover **out)
{
	struct tls_discover *d = calloc(1, sizeof(*d));
	struct epoll_event ev = { .events = EPOLLIN };
	char err[256];
	int ret;

	if (!d)
		return -ENOMEM;
	d->epfd = d->tfd = -1;
	d->mb = mb;
	d->hooks = *hooks;
	d->ctx = ctx;
	d->conf = *conf;
	ret = tls_rules_compile(conf, &d->rules, err, sizeof(err));
	if (ret) {
		pr_warn("discovery: %s\n", err);
		goto bad;
	}
	ret = tls_proc_netns(getpid(), &d->self_netns);
	if (ret)
		goto bad;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->epfd < 0 || d->tfd < 0) {
		ret = -errno;
		goto bad;
	}
	ev.data.u64 = 4;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev)) {
		ret = -errno;
		goto bad;
	}
	/* Without the connector (no CONFIG_PROC_EVENTS, a container without
	 * the capability), the rescan alone finds PSes: slower, still right. */
	if (tls_pconn_open(&d->pc) == 0) {
		ev.data.u64 = 2;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, tls_pconn_fd(d->pc), &ev)) {
			ret = -errno;
			goto bad;
		}
	} else {
		pr_warn("discovery: no exec events; finding PSes by the rescan every %llu ms\n",
			(unsigned long long)(conf->rescan_ns / 1000000));
	}
	*out = d;
	return 0;
bad:
	tls_discover_free(d);
	return ret;
}

void tls_discover_release(struct tls_discover *d)
{
	if (d)
		d->quiet = true;
	tls_discover_free(d);
}

void tls_discover_free(struct tls_discover *d)
{
	unsigned int i;

	if (!d)
		return;
	while (d->nps)
		forget(d, d->nps - 1, "no longer followed");
	for (i = 0; i < d->nns; i++)
		tls_diag_close(d->ns[i].diag);
	tls_pconn_close(d->pc);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->epfd >= 0)
		close(d->epfd);
	tls_rules_free(d->rules);
	free(d->socks);
	free(d->nonps);
	free(d->nonps_next);
	free(d);
}
