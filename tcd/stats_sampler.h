/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sampler: once per stats period, read the classifier's counters (the
 * per-job per-CPU counters of job 0 and of the jobs tlsd has, and every
 * worker flow) and feed them to the statistics engine as one sample.
 *
 * tlsd calls tls_sampler_tick() from its event loop with the current
 * CLOCK_MONOTONIC time (the clock of the flows' packet stamps) every period
 * (TLS_STATS_PERIOD_DEFAULT_NS, down to TLS_STATS_PERIOD_MIN_NS). It
 * measures its own cost, for `tlsctl status` and the benchmark.
 */
#ifndef TLS_STATS_SAMPLER_H
#define TLS_STATS_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "classifier.h"
#include "jobs.h"
#include "stats.h"

struct tls_sampler;

#define TLS_SAMPLER_QUIET_NS_DEFAULT (1000ULL * 1000 * 1000)	  /* 1 s */
#define TLS_SAMPLER_PRUNE_NS_DEFAULT (60ULL * 1000 * 1000 * 1000) /* 60 s */

struct tls_sampler_opts {
	/* Read the flows at most this often (job counters, and so the link's
	 * saturation, are read every tick): reading 1024 flows costs some
	 * 300 us, 3 % of a core at a 10 ms tick. The engine splits a flow's
	 * interval between readings by the verdicts of the ticks it spans.
	 * Default TLS_STATS_PERIOD_DEFAULT_NS; 0: every tick. */
	uint64_t flow_period_ns;
	/* The LRU maps of flows (flows pushed out of their slot, closed PS
	 * sockets) cost a scan of all their buckets to read, even empty
	 * (stats_lru.h). While its last reading showed no record active since
	 * the reading before, a map is read only this often (a flow that
	 * arrives there is then seen up to this late, its bytes not lost:
	 * they count from the reading before); 0: at every flow reading.
	 * 1 s: ten times the default flow period, where the two scans were
	 * a third of tlsd's CPU with nothing else to do (bench-ctl). */
	uint64_t quiet_ns;
	/* Delete records idle this long from the LRU map, after reading them
	 * (the engine forgets such flows anyway, and a map full of them makes
	 * every reading slow); 0: never. */
	uint64_t prune_ns;
	/* Read every way of the used flow slots at each reading, as before
	 * the reader knew them (slot_ways.h): for bench-stats to compare. */
	bool every_way;
};

void tls_sampler_opts_defaults(struct tls_sampler_opts *o);

struct tls_sampler_info {
	uint64_t ticks;
	uint64_t errors;     /* ticks where a read failed (the sample was still fed) */
	uint64_t flows_read; /* flow records read in the last tick (idle slots skipped: not) */
	uint64_t flow_reads; /* ticks that read the flows */
	uint64_t lru_reads;  /* ticks that read the LRU map */
	uint64_t pruned;     /* records deleted from the LRU map */
	uint64_t last_ns;    /* cost of the last tick, wall clock */
	uint64_t max_ns;
	uint64_t total_ns;
	uint64_t total_cpu_ns; /* this thread's CPU time (user + system) in ticks */
};

/* With the default options. */
int tls_sampler_new(struct tls_stats *st, struct tls_sampler **out);
/* o NULL: the defaults. */
int tls_sampler_new_opts(struct tls_stats *st, const struct tls_sampler_opts *o,
			 struct tls_sampler **out);
void tls_sampler_free(struct tls_sampler *sm);

/*
 * One sample at now_ns: job 0 (the default class: part of the link's
 * aggregate), the njobs ids in jobs (1..TLS_MAX_JOBS-1; duplicates and job 0
 * are ignored), then every flow. A failed read is logged once (then at debug
 * level) and the rest of the sample still fed. Returns 0, the first read
 * error, or -ERANGE if now_ns is before the previous sample.
 */
int tls_sampler_tick(struct tls_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns);
/* The same with tlsd's job table. */
int tls_sampler_tick_jobs(struct tls_sampler *sm, const struct tls_maps *m,
			  const struct tls_jobs *jobs, uint64_t now_ns);

void tls_sampler_info(const struct tls_sampler *sm, struct tls_sampler_info *out);

/* The granularity of the classifier's packet stamps (CLOCK_MONOTONIC_COARSE
 * resolution, one kernel tick), for tls_stats_conf.clock_slack_ns; 4 ms if
 * the kernel does not say. */
uint64_t tls_sampler_clock_slack_ns(void);

#endif /* TLS_STATS_SAMPLER_H */
