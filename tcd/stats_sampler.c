// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampler (see stats_sampler.h): the classifier's maps -> one sample of
 * the statistics engine.
 *
 * It must be cheap at a 10 ms period with 64 jobs and 1024 flows: one or
 * two syscalls per flow (one iterator read() per record, a get_next_key and
 * a lookup per LRU entry) cost about 2 ms per tick for 1024 flows, 20 % of
 * a core. So this file reads the maps in bulk, through the BPF-side
 * library's readers, which it keeps across ticks:
 *
 * - the socket-storage flows: the flow iterator's reader (sk_flows.h), one
 *   link kept across ticks, 64 KB a read(), a few hundred records;
 * - the LRU map of flows known by endpoint and of closed PS sockets: batch
 *   lookups, 1024 records per syscall (map_batch.h; a walk on a kernel
 *   without batch operations on LRU maps). Even so a reading scans all of
 *   the map's 65536 buckets, 1 MB, cold every tick: so while the map is
 *   quiet (no record active since the reading before) it is read every
 *   quiet_ns only, and records idle for prune_ns are deleted (in batches),
 *   or closed connections would fill it and make every reading read 65536
 *   records;
 * - the jobs' per-CPU counters: job_counters.h, batch lookups over runs of
 *   nearby ids.
 *
 * tests/bench/bench_stats.c measures both ways.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job_counters.h"
#include "log.h"
#include "map_batch.h"
#include "sk_flows.h"
#include "stats_sampler.h"

#define BATCH 1024

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
	uint64_t flows;

	struct tls_job_counters *jobs;
	struct tls_sk_flows *sk;
	struct tls_flow_key *keys;
	struct tls_flow *vals; /* BATCH each */
	bool walk;	       /* no batch lookups on this kernel */
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
	int err;

	*out = NULL;
	if (!sm)
		return -ENOMEM;
	sm->st = st;
	if (o)
		sm->o = *o;
	else
		tls_sampler_opts_defaults(&sm->o);
	err = tls_job_counters_new(TLS_COUNTERS_OUT, &sm->jobs);
	if (!err)
		err = tls_sk_flows_new(&sm->sk);
	if (err) {
		tls_sampler_free(sm);
		return err;
	}
	sm->keys = calloc(BATCH, sizeof(*sm->keys));
	sm->vals = calloc(BATCH, sizeof(*sm->vals));
	sm->stale = calloc(BATCH, sizeof(*sm->stale));
	if (!sm->keys || !sm->vals || !sm->stale) {
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
	tls_job_counters_free(sm->jobs);
	tls_sk_flows_free(sm->sk);
	free(sm->keys);
	free(sm->vals);
	free(sm->stale);
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

static void feed_job(__u32 job, const void *sum, void *ctx)
{
	const struct tls_job_stats *st = sum;
	struct tls_sampler *sm = ctx;

	tls_stats_add_job(sm->st, job, st->bytes);
}

/* Job 0 and the jobs given, each once, in a few batch lookups. */
static int feed_jobs(struct tls_sampler *sm, const struct tls_maps *m, const uint32_t *ids,
		     unsigned int n)
{
	int err;

	tls_job_counters_want(sm->jobs, TLS_JOB_NONE);
	for (unsigned int i = 0; i < n; i++)
		tls_job_counters_want(sm->jobs, ids[i]);
	err = tls_job_counters_read(sm->jobs, m, feed_job, sm);
	if (err)
		read_failed(sm, "the job counters", err);
	return err;
}

static void feed_flow(struct tls_sampler *sm, const struct tls_flow_key *k,
		      const struct tls_flow *f)
{
	sm->flows++;
	/* a flow of no job or of an id out of range is not a worker flow:
	 * the engine refuses it, and the walk goes on */
	tls_stats_add_flow_since(sm->st, k, f, sm->flows_since);
}

/* A flow of a socket or of a slot, from the library's walks. */
static int flow_cb(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	feed_flow(ctx, k, f);
	return 0;
}

/* The flows of live PS sockets, from the flow iterator. */
static int sk_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err = tls_sk_flows_read(sm->sk, m, flow_cb, sm);

	if (err) {
		char what[64];

		snprintf(what, sizeof(what), "the flows of PS sockets (%s)",
			 tls_sk_flows_failed(sm->sk));
		read_failed(sm, what, err);
	}
	return err;
}

/* The flows known by endpoint, from their slots: a fixed-size array, read
 * whole (TLS_FLOW_SLOTS records, a few batch reads). */
static int slot_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err = tls_for_each_slot_flow(m, flow_cb, sm);

	if (err)
		read_failed(sm, "the flows known by endpoint", err);
	return err;
}

/* Delete the stale records collected so far. */
static void prune(struct tls_sampler *sm, const struct tls_maps *m)
{
	sm->info.pruned += tls_delete_flows(m, sm->stale, sm->nstale);
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
	int err = tls_flow_map_read(m, TLS_FLOW_MAP_OUT, sm->keys, sm->vals, BATCH, &sm->walk,
				    lru_one, &c);
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
