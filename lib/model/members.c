// SPDX-License-Identifier: GPL-2.0-only
/*
 * The membership table's pure part (members.h): an open-addressing hash
 * (linear probing, deletes shift back) of the keys, each with its holders.
 * Every change goes through commit(), which keeps the counts the bounds are
 * checked against.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "members.h"

#define MIN_CAP 64

struct tls_members_table {
	struct tls_member *slot;
	size_t cap; /* a power of two, or 0 */
	size_t n;
	size_t nkind[TLS_MEMBER_KINDS];
	size_t ndisc_ep; /* endpoints discovery holds (alone or shared) */
	/* per port: exact (one address) endpoints discovery holds on it, so
	 * that a claim of the file's looks for them only where there are any
	 * (tls_members_exact_on: a scan of the table) */
	uint32_t exact_on_port[65536];
};

static const size_t max_of_kind[TLS_MEMBER_KINDS] = {
	[TLS_MEMBER_ENDPOINT] = TLS_MEMBERS_MAX_ENDPOINTS,
	[TLS_MEMBER_PID] = TLS_MEMBERS_MAX_PIDS,
};

struct tls_member_key tls_member_ep(const struct tls_endpoint_key *k)
{
	struct tls_member_key m;

	memset(&m, 0, sizeof(m));
	m.kind = TLS_MEMBER_ENDPOINT;
	m.ep = *k;
	return m;
}

struct tls_member_key tls_member_pid(__u32 pid)
{
	struct tls_member_key m;

	memset(&m, 0, sizeof(m));
	m.kind = TLS_MEMBER_PID;
	m.pid = pid;
	return m;
}

static size_t hash(const struct tls_member_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static bool same(const struct tls_member_key *a, const struct tls_member_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The slot of k, or the free slot where it would go (cap > 0). */
static size_t probe(const struct tls_members_table *t, const struct tls_member_key *k)
{
	size_t i = hash(k) & (t->cap - 1);

	while (t->slot[i].used && !same(&t->slot[i].key, k))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static struct tls_member *lookup(const struct tls_members_table *t, const struct tls_member_key *k)
{
	size_t i;

	if (!t->cap)
		return NULL;
	i = probe(t, k);
	return t->slot[i].used ? &t->slot[i] : NULL;
}

static int grow(struct tls_members_table *t)
{
	size_t cap = t->cap ? 2 * t->cap : MIN_CAP, ocap = t->cap, i;
	struct tls_member *old = t->slot, *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	t->slot = s;
	t->cap = cap;
	for (i = 0; i < ocap; i++)
		if (old[i].used)
			s[probe(t, &old[i].key)] = old[i];
	free(old);
	return 0;
}

/* Remove slot i, shifting back the run after it (no tombstones). */
static void remove_slot(struct tls_members_table *t, size_t i)
{
	size_t j = i;

	t->slot[i].used = false;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j].used)
			return;
		home = hash(&t->slot[j].key) & (t->cap - 1);
		/* j's entry stays if its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->slot[j].used = false;
		i = j;
	}
}

static bool held(const struct tls_member *e)
{
	return e && (e->config_job || e->disc_refs);
}

static __u32 in_force(const struct tls_member *e)
{
	if (!held(e))
		return 0;
	return e->config_job ? e->config_job : e->disc_job;
}

static bool ep_any(const struct tls_member_key *k)
{
	static const __u8 zero[sizeof(k->ep.addr)];

	return k->kind == TLS_MEMBER_ENDPOINT && !memcmp(k->ep.addr, zero, sizeof(zero));
}

/* The job in force of e, with the file's claim on its port: a discovered
 * exact endpoint of another job on a port the configuration holds on every
 * address is shadowed, as a claim on the key itself would be (the
 * classifier prefers exact keys: it would take the file's job's traffic to
 * that address). Recorded, it comes back when the file lets the port go. */
static __u32 effective(const struct tls_members_table *t, const struct tls_member *e)
{
	struct tls_member_key any;
	const struct tls_member *a;
	__u32 j = in_force(e);

	if (!j || e->config_job || e->key.kind != TLS_MEMBER_ENDPOINT || ep_any(&e->key))
		return j;
	any = e->key;
	memset(any.ep.addr, 0, sizeof(any.ep.addr));
	a = lookup(t, &any);
	return a && a->config_job && a->config_job != j ? 0 : j;
}

static bool disc_ep(const struct tls_member *e)
{
	return e && e->used && e->key.kind == TLS_MEMBER_ENDPOINT && e->disc_refs;
}

/* e counts in, or leaves (sign -1), the per-port count of discovery's
 * exact endpoints. */
static void count_exact(struct tls_members_table *t, const struct tls_member *e, int sign)
{
	if (disc_ep(e) && !ep_any(&e->key))
		t->exact_on_port[e->key.ep.port] += (uint32_t)sign;
}

/* Make k's entry nv (nobody holding it: none), keeping the counts. */
static int commit(struct tls_members_table *t, const struct tls_member_key *k,
		  const struct tls_member *nv)
{
	struct tls_member *e = lookup(t, k);
	size_t i;

	if (!held(nv)) {
		if (!e)
			return 0;
		t->ndisc_ep -= disc_ep(e);
		count_exact(t, e, -1);
		t->nkind[k->kind]--;
		t->n--;
		remove_slot(t, (size_t)(e - t->slot));
		return 0;
	}
	if (!e) {
		if ((t->n + 1) * 2 > t->cap && grow(t))
			return -ENOMEM;
		i = probe(t, k);
		e = &t->slot[i];
		t->nkind[k->kind]++;
		t->n++;
	} else {
		t->ndisc_ep -= disc_ep(e);
		count_exact(t, e, -1);
	}
	*e = *nv;
	e->key = *k;
	e->used = true;
	t->ndisc_ep += disc_ep(e);
	count_exact(t, e, 1);
	return 0;
}

struct tls_members_table *tls_members_table_new(void)
{
	return calloc(1, sizeof(struct tls_members_table));
}

void tls_members_table_free(struct tls_members_table *t)
{
	if (!t)
		return;
	free(t->slot);
	free(t);
}

const struct tls_member *tls_members_find(const struct tls_members_table *t,
					  const struct tls_member_key *k)
{
	return lookup(t, k);
}

__u32 tls_members_job(const struct tls_members_table *t, const struct tls_member_key *k)
{
	const struct tls_member *e = lookup(t, k);

	return e ? effective(t, e) : 0;
}

size_t tls_members_exact_on(const struct tls_members_table *t, const struct tls_member_key *any,
			    struct tls_member_key *out, size_t max)
{
	size_t i, n = 0;

	if (!ep_any(any) || !t->exact_on_port[any->ep.port])
		return 0;
	for (i = 0; i < t->cap; i++) {
		const struct tls_member *e = &t->slot[i];

		if (!disc_ep(e) || ep_any(&e->key) || e->key.ep.family != any->ep.family ||
		    e->key.ep.proto != any->ep.proto || e->key.ep.port != any->ep.port)
			continue;
		if (n < max)
			out[n] = e->key;
		n++;
	}
	return n;
}

size_t tls_members_count(const struct tls_members_table *t, enum tls_member_kind kind)
{
	return kind < TLS_MEMBER_KINDS ? t->nkind[kind] : 0;
}

/* Room for a new key of k's kind, and for discovery's new endpoint. */
static bool room(const struct tls_members_table *t, const struct tls_member_key *k,
		 const struct tls_member *e, enum tls_member_holder h)
{
	if (!e && t->nkind[k->kind] >= max_of_kind[k->kind])
		return false;
	return h != TLS_HOLDER_DISCOVERY || k->kind != TLS_MEMBER_ENDPOINT || disc_ep(e) ||
	       t->ndisc_ep < TLS_MEMBERS_MAX_DISC_ENDPOINTS;
}

int tls_members_acquire(struct tls_members_table *t, const struct tls_member_key *k,
			enum tls_member_holder h, __u32 job, struct tls_member_change *ch,
			struct tls_member *was)
{
	const struct tls_member *e;
	struct tls_member nv;
	int ret = 0, err;

	if (!job || k->kind >= TLS_MEMBER_KINDS ||
	    (h != TLS_HOLDER_CONFIG && h != TLS_HOLDER_DISCOVERY))
		return -EINVAL;
	e = lookup(t, k);
	if (e) {
		nv = *e;
	} else {
		memset(&nv, 0, sizeof(nv));
		nv.key = *k;
	}
	if (was)
		*was = nv;
	if (h == TLS_HOLDER_DISCOVERY && nv.disc_refs && nv.disc_job != job)
		return -EBUSY;
	if (!room(t, k, e, h) || (h == TLS_HOLDER_DISCOVERY && nv.disc_refs == UINT32_MAX))
		return -ENOSPC;
	ch->before = e ? effective(t, e) : 0;
	if (h == TLS_HOLDER_CONFIG) {
		nv.config_job = job;
	} else {
		nv.disc_job = job;
		nv.disc_refs++;
		if (nv.config_job && nv.config_job != job)
			ret = TLS_MEMBER_SHADOWED;
	}
	err = commit(t, k, &nv);
	if (err)
		return err;
	ch->after = effective(t, &nv);
	if (h == TLS_HOLDER_DISCOVERY && !ch->after)
		ret = TLS_MEMBER_SHADOWED; /* by the file's claim on the port */
	return ret;
}

int tls_members_release(struct tls_members_table *t, const struct tls_member_key *k,
			enum tls_member_holder h, __u32 job, struct tls_member_change *ch)
{
	const struct tls_member *e = lookup(t, k);
	struct tls_member nv;

	if (!e)
		return -ENOENT;
	nv = *e;
	if (h == TLS_HOLDER_CONFIG) {
		if (!job || nv.config_job != job)
			return -ENOENT;
		nv.config_job = 0;
	} else {
		if (!nv.disc_refs || nv.disc_job != job)
			return -ENOENT;
		if (!--nv.disc_refs)
			nv.disc_job = 0;
	}
	ch->before = effective(t, e);
	ch->after = effective(t, &nv);
	return commit(t, k, &nv); /* no growth: cannot fail */
}

void tls_members_restore(struct tls_members_table *t, const struct tls_member *was)
{
	/* back to what it was: a key that was there keeps its slot, one
	 * that was not goes (neither can fail) */
	commit(t, &was->key, was);
}

size_t tls_members_stale(const struct tls_members_table *t, struct tls_member_key *keys, size_t n)
{
	size_t i, nstale = 0;

	for (i = 0; i < n; i++)
		if (!lookup(t, &keys[i]))
			keys[nstale++] = keys[i];
	return nstale;
}
