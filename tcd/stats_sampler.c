// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampler (see stats_sampler.h): the classifier's maps -> one sample of
 * the statistics engine.
 *
 * It must be cheap at a 10 ms period with 64 jobs and 1024 flows, and the
 * map API's readers are built for the CLI, not for that: they cost one or
 * two syscalls per flow (one iterator read() per record, a get_next_key and
 * a lookup per LRU entry), about 2 ms per tick for 1024 flows, 20 % of a
 * core. So this file reads the same maps (the fds of struct tls_maps) in
 * bulk:
 *
 * - the socket-storage flows: the flow iterator (the classifier's
 *   tls_dump_sk_flows) through one link kept across ticks, read 64 KB at a
 *   time, i.e. a few hundred records per read();
 * - the LRU map of flows known by endpoint and of closed PS sockets: batch
 *   lookups, 1024 records per syscall (falling back to a walk on a kernel
 *   without batch operations on LRU maps). Even so a reading scans all of
 *   the map's 65536 buckets, 1 MB, cold every tick: so while the map is
 *   quiet (no record active since the reading before) it is read every
 *   quiet_ns only, and records idle for prune_ns are deleted, or closed
 *   connections would fill it and make every reading read 65536 records;
 * - the jobs' per-CPU counters: batch lookups over runs of nearby ids.
 *
 * tests/bench/bench_stats.c measures both ways.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "map_batch.h"
#include "stats_sampler.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() lets out */
#endif

#define ITER_BUF (64 * 1024)
#define BATCH	 1024
#define JOB_RUN	 64 /* job counters per batch lookup */
#define JOB_GAP	 4  /* ids this close share a batch */

struct tls_sampler {
	struct tls_stats *st;
	struct tls_sampler_opts o;
	uint64_t now, prev_tick;
	uint64_t flows_read_ns; /* the last reading of the flows, 0: none */
	uint64_t flows_since;	/* the one before, for the socket flows */
	uint64_t lru_read_ns;	/* the last reading of the LRU map, 0: none */
	bool lru_busy;		/* it showed a record active since the one before */
	bool lru_seen_busy;	/* this reading so far */
	uint64_t lru_since;	/* the reading before this one */
	unsigned int nstale;
	struct tls_flow_key *stale; /* BATCH keys to prune */
	struct tls_sampler_info info;
	bool warned;
	uint32_t seen_tick[TLS_MAX_JOBS]; /* duplicate ids within a tick */
	uint32_t tick;
	uint64_t flows;

	int ncpu;
	struct tls_job_stats *percpu; /* one job's per-CPU counters */
	/* the iterator link, and the program and map it was made for */
	int link, link_prog, link_map;
	char *buf; /* ITER_BUF */
	struct tls_flow_key *keys;
	struct tls_flow *vals; /* BATCH each */
	__u32 job_keys[JOB_RUN];
	struct tls_job_stats *job_vals; /* JOB_RUN * ncpu */
	bool job_batch;			/* batch lookups on the job counters work */
	bool walk;			/* no batch lookups on this kernel */
};

void tls_sampler_opts_defaults(struct tls_sampler_opts *o)
{
	o->flow_period_ns = TLS_STATS_PERIOD_DEFAULT_NS;
	o->quiet_ns = TLS_SAMPLER_QUIET_NS_DEFAULT;
	o->prune_ns = TLS_SAMPLER_PRUNE_NS_DEFAULT;
}

int tls_sampler_new(struct tls_stats *st, struct tls_sampler **out)
{
	return tls_sampler_new_opts(st, NULL, out);
}

int tls_sampler_new_opts(struct tls_stats *st, const struct tls_sampler_opts *o,
			 struct tls_sampler **out)
{
	struct tls_sampler *sm = calloc(1, sizeof(*sm));

	*out = NULL;
	if (!sm)
		return -ENOMEM;
	sm->st = st;
	if (o)
		sm->o = *o;
	else
		tls_sampler_opts_defaults(&sm->o);
	sm->link = -1;
	sm->ncpu = libbpf_num_possible_cpus();
	if (sm->ncpu <= 0) {
		int err = sm->ncpu ? sm->ncpu : -EINVAL;

		free(sm);
		return err;
	}
	sm->percpu = calloc(sm->ncpu, sizeof(*sm->percpu));
	sm->buf = malloc(ITER_BUF);
	sm->keys = calloc(BATCH, sizeof(*sm->keys));
	sm->vals = calloc(BATCH, sizeof(*sm->vals));
	sm->stale = calloc(BATCH, sizeof(*sm->stale));
	sm->job_vals = calloc((size_t)JOB_RUN * sm->ncpu, sizeof(*sm->job_vals));
	sm->job_batch = true;
	if (!sm->percpu || !sm->buf || !sm->keys || !sm->vals || !sm->stale || !sm->job_vals) {
		tls_sampler_free(sm);
		return -ENOMEM;
	}
	*out = sm;
	return 0;
}

void tls_sampler_free(struct tls_sampler *sm)
{
	if (!sm)
		return;
	if (sm->link >= 0)
		close(sm->link);
	free(sm->percpu);
	free(sm->buf);
	free(sm->keys);
	free(sm->vals);
	free(sm->stale);
	free(sm->job_vals);
	free(sm);
}

uint64_t tls_sampler_clock_slack_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || (!res.tv_sec && !res.tv_nsec))
		return 4ULL * 1000 * 1000;
	return (uint64_t)res.tv_sec * 1000000000ULL + res.tv_nsec;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A read error repeats every tick: say it once, then at debug level. */
static void read_failed(struct tls_sampler *sm, const char *what, int err)
{
	if (!sm->warned)
		pr_warn("stats: cannot read %s: %s (further errors at debug level)\n", what,
			strerror(-err));
	else
		pr_debug("stats: cannot read %s: %s\n", what, strerror(-err));
	sm->warned = true;
}

/* One job's bytes, one lookup: the sum of its per-CPU counters (as
 * tls_read_job_stats, without its allocation). */
static int job_lookup(struct tls_sampler *sm, const struct tls_maps *m, uint32_t job)
{
	uint64_t bytes = 0;
	char what[32];

	if (bpf_map_lookup_elem(m->job_stats, &job, sm->percpu)) {
		int err = -errno;

		snprintf(what, sizeof(what), "job %u's counters", job);
		read_failed(sm, what, err);
		return err;
	}
	for (int i = 0; i < sm->ncpu; i++)
		bytes += sm->percpu[i].bytes;
	return tls_stats_add_job(sm->st, job, bytes);
}

/* Jobs [a, b] (b - a < JOB_RUN) in one batch lookup; those wanted to the
 * engine. -EOPNOTSUPP if the kernel has no batch lookups on arrays. */
static int job_run(struct tls_sampler *sm, const struct tls_maps *m, uint32_t a, uint32_t b)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 prev = a - 1, out, count = b - a + 1;
	int err;

	err = bpf_map_lookup_batch(m->job_stats, a ? &prev : NULL, &out, sm->job_keys, sm->job_vals,
				   &count, &opts);
	if (err < 0)
		err = -errno;
	if (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP)
		return -EOPNOTSUPP;
	if (err && err != -ENOENT) {
		read_failed(sm, "the job counters", err);
		return err;
	}
	for (__u32 k = 0; k < count; k++) {
		uint32_t job = sm->job_keys[k];
		const struct tls_job_stats *v = sm->job_vals + (size_t)k * sm->ncpu;
		uint64_t bytes = 0;

		if (job >= TLS_MAX_JOBS || sm->seen_tick[job] != sm->tick)
			continue; /* read on the way, not wanted */
		for (int i = 0; i < sm->ncpu; i++)
			bytes += v[i].bytes;
		tls_stats_add_job(sm->st, job, bytes);
	}
	return 0;
}

/*
 * Job 0 and the jobs given, each once. Ids close together are read in one
 * batch lookup (a run may include a few ids not wanted: reading an entry
 * costs a tenth of a syscall), so 64 jobs cost 8 us instead of 20.
 */
static int feed_jobs(struct tls_sampler *sm, const struct tls_maps *m, const uint32_t *ids,
		     unsigned int n)
{
	uint32_t max = 0, a = 0, last = 0;
	bool in_run = false;
	int first = 0, err;

	sm->seen_tick[TLS_JOB_NONE] = sm->tick;
	for (unsigned int i = 0; i < n; i++)
		if (ids[i] < TLS_MAX_JOBS) {
			sm->seen_tick[ids[i]] = sm->tick;
			if (ids[i] > max)
				max = ids[i];
		}
	for (uint32_t j = 0; j <= max + 1; j++) {
		bool wanted = j <= max && sm->seen_tick[j] == sm->tick;

		if (in_run && (j > max || (wanted && (j - last > JOB_GAP || j - a >= JOB_RUN)))) {
			/* close the run [a, last] */
			err = sm->job_batch ? job_run(sm, m, a, last) : -EOPNOTSUPP;
			if (err == -EOPNOTSUPP) {
				sm->job_batch = false;
				for (uint32_t k = a; k <= last; k++)
					if (sm->seen_tick[k] == sm->tick) {
						err = job_lookup(sm, m, k);
						if (err && !first)
							first = err;
					}
			} else if (err && !first) {
				first = err;
			}
			in_run = false;
		}
		if (wanted) {
			if (!in_run)
				a = j;
			in_run = true;
			last = j;
		}
	}
	return first;
}

static void feed_flow(struct tls_sampler *sm, const struct tls_flow_key *k,
		      const struct tls_flow *f)
{
	sm->flows++;
	/* a flow of no job or of an id out of range is not a worker flow:
	 * the engine refuses it, and the walk goes on */
	tls_stats_add_flow_since(sm->st, k, f, sm->flows_since);
}

/* The flows of live PS sockets, from the flow iterator. */
static int sk_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	size_t have = 0;
	ssize_t n;
	int it, err = 0;

	if (m->sk_iter < 0)
		return 0; /* maps opened without the iterator: endpoint flows only */
	if (sm->link < 0 || sm->link_prog != m->sk_iter || sm->link_map != m->sk_jobs) {
		union bpf_iter_link_info li = { .map = { .map_fd = m->sk_jobs } };
		DECLARE_LIBBPF_OPTS(bpf_link_create_opts, lo, .iter_info = &li,
				    .iter_info_len = sizeof(li));

		if (sm->link >= 0)
			close(sm->link);
		sm->link = bpf_link_create(m->sk_iter, 0, BPF_TRACE_ITER, &lo);
		if (sm->link < 0) {
			err = -errno;
			sm->link = -1;
			read_failed(sm, "the flows of PS sockets (iterator link)", err);
			return err;
		}
		sm->link_prog = m->sk_iter;
		sm->link_map = m->sk_jobs;
	}
	it = bpf_iter_create(sm->link);
	if (it < 0) {
		err = -errno;
		read_failed(sm, "the flows of PS sockets (iterator)", err);
		return err;
	}
	/* whole records, however the reads cut them */
	while ((n = read(it, sm->buf + have, ITER_BUF - have)) > 0) {
		size_t off = 0;

		have += n;
		for (; have - off >= sizeof(struct tls_flow_rec);
		     off += sizeof(struct tls_flow_rec)) {
			struct tls_flow_rec r;

			memcpy(&r, sm->buf + off, sizeof(r));
			feed_flow(sm, &r.key, &r.flow);
		}
		memmove(sm->buf, sm->buf + off, have - off);
		have -= off;
	}
	if (n < 0) {
		err = -errno;
		read_failed(sm, "the flows of PS sockets", err);
	}
	close(it);
	return err;
}

static int slot_flow(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	feed_flow(ctx, k, f);
	return 0;
}

/* The flows known by endpoint, from their slots: a fixed-size array, read
 * whole (TLS_FLOW_SLOTS records, a few batch reads). */
static int slot_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err;

	if (m->flow_slots < 0)
		return 0;
	err = tls_for_each_slot_flow(m, slot_flow, sm);
	if (err)
		read_failed(sm, "the flows known by endpoint", err);
	return err;
}

/* Delete the stale records collected so far. */
static void prune(struct tls_sampler *sm, const struct tls_maps *m)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = sm->nstale;

	if (!count)
		return;
	if (bpf_map_delete_batch(m->flows, sm->stale, &count, &opts) == 0) {
		sm->info.pruned += count;
	} else {
		/* one went in between (LRU eviction, the classifier): the
		 * others one by one */
		for (unsigned int i = 0; i < sm->nstale; i++)
			if (!bpf_map_delete_elem(m->flows, &sm->stale[i]))
				sm->info.pruned++;
	}
	sm->nstale = 0;
}

/* A record of the LRU map: to the engine, and noted if busy or stale. */
static void lru_record(struct tls_sampler *sm, const struct tls_maps *m,
		       const struct tls_flow_key *k, const struct tls_flow *f)
{
	sm->flows++;
	tls_stats_add_flow_since(sm->st, k, f, sm->lru_since);
	if (f->last_ns + tls_stats_get_conf(sm->st)->clock_slack_ns >= sm->lru_since)
		sm->lru_seen_busy = true;
	if (sm->o.prune_ns && f->last_ns + sm->o.prune_ns < sm->now) {
		sm->stale[sm->nstale++] = *k;
		if (sm->nstale == BATCH)
			prune(sm, m);
	}
}

struct lru_ctx {
	struct tls_sampler *sm;
	const struct tls_maps *m;
};

static void lru_one(const void *key, const void *val, void *ctx)
{
	struct lru_ctx *c = ctx;

	lru_record(c->sm, c->m, key, val);
}

/* Flows known by endpoint and closed PS sockets, from the LRU map. */
static int lru_read(struct tls_sampler *sm, const struct tls_maps *m)
{
	struct lru_ctx c = { sm, m };
	int err = tls_map_read_all(m->flows, "the flow map", sm->keys, sizeof(*sm->keys), sm->vals,
				   sizeof(*sm->vals), BATCH, &sm->walk, lru_one, &c);
	if (err)
		read_failed(sm, "the flow map", err);
	return err;
}

static int lru_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err;

	if (sm->lru_read_ns && !sm->lru_busy && sm->o.quiet_ns &&
	    sm->now - sm->lru_read_ns < sm->o.quiet_ns)
		return 0; /* quiet: not yet */
	/* a record first seen now counts from the reading before */
	sm->lru_since = sm->lru_read_ns ? sm->lru_read_ns : sm->now;
	sm->lru_seen_busy = false;
	sm->nstale = 0;
	err = lru_read(sm, m);
	prune(sm, m);
	sm->lru_busy = sm->lru_seen_busy;
	sm->lru_read_ns = sm->now;
	sm->info.lru_reads++;
	return err;
}

/* Read the flows in this tick? Yes when flow_period_ns has passed since the
 * last reading, give or take half a tick (ticks jitter). */
static bool flows_due(const struct tls_sampler *sm)
{
	uint64_t half = sm->prev_tick ? (sm->now - sm->prev_tick) / 2 : 0;

	return !sm->flows_read_ns || !sm->o.flow_period_ns ||
	       sm->now + half >= sm->flows_read_ns + sm->o.flow_period_ns;
}

int tls_sampler_tick(struct tls_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), dt;
	int err, first = 0;

	err = tls_stats_begin(sm->st, now_ns);
	if (err)
		return err;
	sm->now = now_ns;
	if (++sm->tick == 0) { /* wrapped: marks of 4 billion ticks ago may match */
		memset(sm->seen_tick, 0, sizeof(sm->seen_tick));
		sm->tick = 1;
	}
	first = feed_jobs(sm, m, jobs, njobs);
	if (flows_due(sm)) {
		sm->flows = 0;
		sm->flows_since = sm->flows_read_ns ? sm->flows_read_ns : now_ns;
		tls_stats_flows_read(sm->st); /* even if there are none */
		err = sk_flows(sm, m);
		if (err && !first)
			first = err;
		err = slot_flows(sm, m);
		if (err && !first)
			first = err;
		err = lru_flows(sm, m);
		if (err && !first)
			first = err;
		sm->flows_read_ns = now_ns;
		sm->info.flows_read = sm->flows;
		sm->info.flow_reads++;
	}
	sm->prev_tick = now_ns;
	tls_stats_end(sm->st);

	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	sm->info.ticks++;
	if (first)
		sm->info.errors++;
	sm->info.last_ns = dt;
	if (dt > sm->info.max_ns)
		sm->info.max_ns = dt;
	sm->info.total_ns += dt;
	sm->info.total_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return first;
}

int tls_sampler_tick_jobs(struct tls_sampler *sm, const struct tls_maps *m,
			  const struct tls_jobs *jobs, uint64_t now_ns)
{
	uint32_t ids[TLS_MAX_JOBS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < jobs->n && n < TLS_MAX_JOBS; i++)
		ids[n++] = jobs->job[i].id;
	return tls_sampler_tick(sm, m, ids, n, now_ns);
}

void tls_sampler_info(const struct tls_sampler *sm, struct tls_sampler_info *out)
{
	*out = sm->info;
}
