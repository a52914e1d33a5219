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
 * - the flows known by endpoint: their slots' mapped memory (flow_slots.c);
 * - the LRU map of flows pushed out of their slot and of closed PS sockets:
 *   batch lookups, 1024 records per syscall (map_batch.h; a walk on a
 *   kernel without batch operations on LRU maps), read only when due and
 *   pruned (stats_lru.h);
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
#include "slot_ways.h"
#include "stats_lru.h"
#include "stats_sampler.h"

/* Positions of the socket iterator's output with a hint (beyond: none). */
#define SK_HINTS 16384

struct tls_sampler {
	struct tls_stats *st;
	struct tls_sampler_opts o;
	uint64_t now, prev_tick;
	uint64_t flows_read_ns; /* the last reading of the flows, 0: none */
	uint64_t flows_since;	/* the one before, for the socket flows */
	struct tls_sampler_info info;
	bool warned;
	uint64_t flows;

	struct tls_job_counters *jobs;
	struct tls_sk_flows *sk;
	struct tls_lru_reader *lru;
	struct tls_slot_ways *ways; /* of the flow slots */
	/* Where the engine held the flow last read at each place: each slot,
	 * each position in the socket iterator's output (its order holds
	 * from one reading to the next while the sockets do): the engine's
	 * hints (tls_stats_add_flow_hint). */
	uint32_t slot_hint[TLS_FLOW_SLOTS];
	uint32_t sk_hint[SK_HINTS];
	unsigned int sk_pos; /* in this reading */
};

void tls_sampler_opts_defaults(struct tls_sampler_opts *o)
{
	o->flow_period_ns = TLS_STATS_PERIOD_DEFAULT_NS;
	o->quiet_ns = TLS_SAMPLER_QUIET_NS_DEFAULT;
	o->prune_ns = TLS_SAMPLER_PRUNE_NS_DEFAULT;
}

/* A record of the LRU map, to the engine. */
static uint64_t lru_record(const struct tls_flow_key *k, const void *val, uint64_t since, void *ctx)
{
	const struct tls_flow *f = val;
	struct tls_sampler *sm = ctx;

	sm->flows++;
	tls_stats_add_flow_since(sm->st, k, f, since);
	return f->last_ns;
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
	if (!err)
		err = tls_lru_reader_new(TLS_FLOW_MAP_OUT, lru_record, sm, &sm->lru);
	if (!err)
		err = tls_slot_ways_new(TLS_FLOW_MAP_OUT, &sm->ways);
	if (err) {
		tls_sampler_free(sm);
		return err;
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
	tls_lru_reader_free(sm->lru);
	tls_slot_ways_free(sm->ways);
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

/* A flow of a PS socket, the sk_pos-th of the iterator's output. */
static int sk_flow_cb(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	struct tls_sampler *sm = ctx;
	unsigned int pos = sm->sk_pos++;

	/* a flow of no job or of an id out of range is not a worker flow:
	 * the engine refuses it, and the walk goes on */
	sm->flows++;
	tls_stats_add_flow_hint(sm->st, k, f, sm->flows_since,
				pos < SK_HINTS ? &sm->sk_hint[pos] : NULL);
	return 0;
}

/* A flow known by endpoint, in its slot. */
static int slot_flow_cb(__u32 slot, const struct tls_flow_key *k, const struct tls_flow *f,
			void *ctx)
{
	struct tls_sampler *sm = ctx;

	sm->flows++;
	tls_stats_add_flow_hint(sm->st, k, f, sm->flows_since,
				slot < TLS_FLOW_SLOTS ? &sm->slot_hint[slot] : NULL);
	return 0;
}

/* A flow known by endpoint in its slot, idle, not read (slot_ways.h): as
 * it was at the reading that read it; read after all if the engine's hint
 * for it no longer holds (the flow moved in the engine's table, or it had
 * no room for it: TLS_STATS_HINT_RETRY). A slot whose flow the engine will
 * not track (hint 0: a flow idle 60 s, history) stays unread. */
static int slot_flow_skipped(__u32 slot, void *ctx)
{
	struct tls_sampler *sm = ctx;

	if (slot >= TLS_FLOW_SLOTS || !sm->slot_hint[slot])
		return 0;
	return tls_stats_flow_unchanged(sm->st, &sm->slot_hint[slot]) ? 0 : TLS_SLOT_READ;
}

/* The flows of live PS sockets, from the flow iterator. */
static int sk_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err;

	sm->sk_pos = 0;
	err = tls_sk_flows_read(sm->sk, m, sk_flow_cb, sm);

	if (err) {
		char what[64];

		snprintf(what, sizeof(what), "the flows of PS sockets (%s)",
			 tls_sk_flows_failed(sm->sk));
		read_failed(sm, what, err);
	}
	return err;
}

/* The slots' map of used sets is checked against the slots themselves every this
 * many flow readings (10 s at the default period), and at the first. */
#define MARK_EVERY 100

/* The flows known by endpoint, from their slots: the ways seen holding a
 * flow, in the sets ever used (slot_ways.h). The sets a previous program
 * filled, or filled after this program's maps were made, are marked by a
 * scan of the slots at the first reading and every MARK_EVERY after, and
 * then every way of the used sets read (such a program's takes are not
 * counted in this program's maps). */
static int slot_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	int err;

	if (sm->info.flow_reads % MARK_EVERY == 0) {
		unsigned int n = tls_slots_mark_all(m);

		if (n && sm->info.flow_reads)
			pr_debug("stats: %u sets of flow slots were not marked used\n", n);
		tls_slot_ways_forget(sm->ways);
	}
	err = tls_for_each_slot_flow_ways(m, sm->o.every_way ? NULL : sm->ways, slot_flow_cb,
					  slot_flow_skipped, sm);
	if (err)
		read_failed(sm, "the flows known by endpoint", err);
	return err;
}

/* Flows pushed out of their slot and closed PS sockets, from the LRU map. */
static int lru_flows(struct tls_sampler *sm, const struct tls_maps *m)
{
	struct tls_lru_opts o = {
		.quiet_ns = sm->o.quiet_ns,
		.prune_ns = sm->o.prune_ns,
		.slack_ns = tls_stats_get_conf(sm->st)->clock_slack_ns,
	};
	struct tls_lru_info li;
	bool read;
	int err = tls_lru_read(sm->lru, m, &o, sm->now, &read);

	if (err)
		read_failed(sm, "the flow map", err);
	tls_lru_info(sm->lru, &li);
	sm->info.lru_reads = li.reads;
	sm->info.pruned = li.pruned;
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
