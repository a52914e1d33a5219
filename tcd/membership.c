// SPDX-License-Identifier: GPL-2.0-only
/*
 * Membership (membership.h): the table's decisions written to the maps.
 * A claim whose map write fails is taken back out of the table, so that
 * the table never says more than the maps; a release whose write fails is
 * said (the next takeover's reconciliation deletes what it left).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "log.h"
#include "membership.h"

struct tls_members {
	struct tls_members_table *t;
	const struct tls_maps *m;
	/* a takeover whose leftovers are not yet reconciled: a map full of
	 * them makes room at the first claim it refuses (write_change) */
	bool takeover;
};

int tls_members_new(const struct tls_maps *m, struct tls_members **out)
{
	struct tls_members *mb = calloc(1, sizeof(*mb));

	if (mb)
		mb->t = tls_members_table_new();
	if (!mb || !mb->t) {
		free(mb);
		return -ENOMEM;
	}
	mb->m = m;
	*out = mb;
	return 0;
}

void tls_members_free(struct tls_members *mb)
{
	if (!mb)
		return;
	tls_members_table_free(mb->t);
	free(mb);
}

void tls_members_set_maps(struct tls_members *mb, const struct tls_maps *m)
{
	mb->m = m;
}

/* Discovery's exact endpoint key: its map entry follows the job in force
 * (none: shadowed by the file's claim on its port). */
static void sync_one(const struct tls_members *mb, const struct tls_member_key *key)
{
	__u32 job = tls_members_job(mb->t, key);
	int err = job ? tls_add_endpoint(mb->m, &key->ep, job) : tls_del_endpoint(mb->m, &key->ep);

	if (err && err != -ENOENT) {
		char ep[64];

		tls_endpoint_format(&key->ep, ep, sizeof(ep));
		pr_warn("endpoint %s: cannot %s: %s\n", ep,
			job ? "give it back to its PS's job" : "shadow it by the file's port",
			strerror(-err));
	}
}

static __u32 any_job(const struct tls_members *mb, const struct tls_endpoint_key *k)
{
	struct tls_endpoint_key any = *k;

	memset(any.addr, 0, sizeof(any.addr));
	return tls_members_endpoint_job(mb, &any);
}

static int write_add(const struct tls_members *mb, const struct tls_member_key *key, __u32 job)
{
	return key->kind == TLS_MEMBER_ENDPOINT ? tls_add_endpoint(mb->m, &key->ep, job) :
						  tls_add_process(mb->m, (pid_t)key->pid, job);
}

/* The job in force of a key changed: the map follows (a process in a new
 * job has its sockets tagged again). At a takeover the maps still hold the
 * crashed run's entries until every holder has claimed (the reconciliation
 * deletes those nobody holds then); a map they fill refuses a claim
 * (E2BIG): the reconciliation runs then, and the claim again. What it
 * deletes that a holder has yet to claim comes back with that claim. */
static int write_change(struct tls_members *mb, const struct tls_member_key *key,
			const struct tls_member_change *ch)
{
	int err;

	if (ch->after == ch->before)
		return 0;
	if (!ch->after)
		return key->kind == TLS_MEMBER_ENDPOINT ? tls_del_endpoint(mb->m, &key->ep) :
							  tls_del_process(mb->m, (pid_t)key->pid);
	err = write_add(mb, key, ch->after);
	if (err == -E2BIG && mb->takeover) {
		pr_info("takeover: the %s map is full of the previous run's entries: those no "
			"job holds yet are deleted now\n",
			key->kind == TLS_MEMBER_ENDPOINT ? "endpoint" : "process");
		tls_members_reconcile(mb);
		err = write_add(mb, key, ch->after);
	}
	return err;
}

/* The configuration claimed or let go of `any` (a port on every address):
 * discovery's exact endpoints on that port follow, each to the job now in
 * force for it (none while shadowed). */
static void sync_exact(const struct tls_members *mb, const struct tls_member_key *any)
{
	size_t n = tls_members_exact_on(mb->t, any, NULL, 0), i;
	struct tls_member_key *keys;

	if (!n)
		return;
	keys = calloc(n, sizeof(*keys));
	if (!keys) {
		pr_warn("out of memory: %zu endpoints on a port of the file's left as they were\n",
			n);
		return;
	}
	n = tls_members_exact_on(mb->t, any, keys, n);
	for (i = 0; i < n; i++)
		sync_one(mb, &keys[i]);
	free(keys);
}

int tls_members_add_endpoint(struct tls_members *mb, enum tls_member_holder h, __u32 job,
			     const struct tls_endpoint_key *k, __u32 *other)
{
	struct tls_member_key key = tls_member_ep(k);
	struct tls_member_change ch;
	struct tls_member was;
	int ret = tls_members_acquire(mb->t, &key, h, job, &ch, &was), err;

	if (other)
		*other = ret == -EBUSY ? was.disc_job :
			 ret != TLS_MEMBER_SHADOWED ? 0 :
			 was.config_job ? was.config_job :
					  any_job(mb, k); /* the file's, on every address */
	if (ret < 0)
		return ret;
	/* From an empty table (a start, a takeover) the first claim writes
	 * even a job the map has already: the write then changes nothing. */
	err = write_change(mb, &key, &ch);
	if (err) {
		tls_members_restore(mb->t, &was);
		return err;
	}
	if (h == TLS_HOLDER_CONFIG)
		sync_exact(mb, &key);
	return ret;
}

int tls_members_del_endpoint(struct tls_members *mb, enum tls_member_holder h, __u32 job,
			     const struct tls_endpoint_key *k)
{
	struct tls_member_key key = tls_member_ep(k);
	const struct tls_member *e;
	struct tls_member_change ch;
	int err = tls_members_release(mb->t, &key, h, job, &ch);

	if (err)
		return err;
	if (h == TLS_HOLDER_CONFIG)
		sync_exact(mb, &key);
	err = write_change(mb, &key, &ch);
	if (err && err != -ENOENT) {
		char ep[64];

		tls_endpoint_format(k, ep, sizeof(ep));
		pr_warn("endpoint %s: cannot %s: %s\n", ep,
			ch.after ? "give it to its other holder" : "delete it", strerror(-err));
	}
	e = tls_members_find(mb->t, &key);
	return !e || !e->disc_refs;
}

__u32 tls_members_endpoint_job(const struct tls_members *mb, const struct tls_endpoint_key *k)
{
	struct tls_member_key key = tls_member_ep(k);

	return tls_members_job(mb->t, &key);
}

__u32 tls_members_endpoint_config_job(const struct tls_members *mb,
				      const struct tls_endpoint_key *k)
{
	struct tls_member_key key = tls_member_ep(k);
	const struct tls_member *e = tls_members_find(mb->t, &key);

	return e ? e->config_job : 0;
}

int tls_members_add_process(struct tls_members *mb, enum tls_member_holder h, __u32 job, pid_t pid)
{
	struct tls_member_key key = tls_member_pid((__u32)pid);
	struct tls_member_change ch;
	struct tls_member was;
	int ret, err;

	if (pid <= 0)
		return -EINVAL;
	ret = tls_members_acquire(mb->t, &key, h, job, &ch, &was);
	if (ret < 0)
		return ret;
	err = write_change(mb, &key, &ch);
	if (err < 0) {
		tls_members_restore(mb->t, &was);
		/* what the failed join tagged goes (a gone process's pid
		 * entry went already) */
		if (!ch.before && err != -ESRCH)
			tls_del_process(mb->m, pid);
	}
	return err;
}

int tls_members_del_process(struct tls_members *mb, enum tls_member_holder h, __u32 job, pid_t pid)
{
	struct tls_member_key key = tls_member_pid((__u32)pid);
	struct tls_member_change ch;
	int err = tls_members_release(mb->t, &key, h, job, &ch);

	if (err)
		return err;
	err = write_change(mb, &key, &ch);
	if (err < 0 && err != -ESRCH)
		pr_warn("pid %d: cannot take it out of its job: %s\n", pid, strerror(-err));
	return err < 0 ? err : 0;
}

int tls_members_tag_socket(const struct tls_members *mb, pid_t pid, int fd)
{
	struct tls_member_key key = tls_member_pid((__u32)pid);
	__u32 job = tls_members_job(mb->t, &key);

	return job ? tls_add_socket_fd(mb->m, fd, job) : -ENOENT;
}

void tls_members_takeover(struct tls_members *mb)
{
	mb->takeover = true;
}

void tls_members_reconcile(struct tls_members *mb)
{
	struct tls_endpoint_key *eps = NULL;
	struct tls_member_key *keys;
	size_t neps = tls_endpoint_keys(mb->m, &eps), npids, n, i, stale_eps = 0, stale_pids;
	__u32 *pids = NULL;

	mb->takeover = false;
	npids = tls_pid_keys(mb->m, &pids);
	n = neps > npids ? neps : npids;
	keys = malloc((n ? n : 1) * sizeof(*keys));
	if (!keys) {
		pr_warn("takeover: out of memory: the previous run's memberships stay\n");
		free(eps);
		free(pids);
		return;
	}
	for (i = 0; i < neps; i++)
		keys[i] = tls_member_ep(&eps[i]);
	stale_eps = tls_members_stale(mb->t, keys, neps);
	for (i = 0; i < stale_eps; i++)
		tls_del_endpoint(mb->m, &keys[i].ep);
	/* Processes the previous run had joined that discovery does not
	 * follow now (exited, or no PS by the new rules): their pid entry and
	 * socket tags would give a reused pid or id the wrong job. */
	for (i = 0; i < npids; i++)
		keys[i] = tls_member_pid(pids[i]);
	stale_pids = tls_members_stale(mb->t, keys, npids);
	for (i = 0; i < stale_pids; i++)
		tls_del_process(mb->m, (pid_t)keys[i].pid);
	pr_info("takeover: of the previous run's %zu endpoints and %zu processes, %zu and %zu "
		"no job holds now were deleted\n",
		neps, npids, stale_eps, stale_pids);
	free(keys);
	free(eps);
	free(pids);
}
