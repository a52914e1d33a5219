// SPDX-License-Identifier: GPL-2.0-only
/* The ingress sampler (stats_ingress.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job_counters.h"
#include "log.h"
#include "slot_ways.h"
#include "stats_ingress.h"
#include "stats_lru.h"
#include "stats_sampler.h"

/*
 * The flows: those in their slots (the mapped array, the sets marked
 * used) at every reading, but for the idle ones the ways reader skips
 * (slot_ways.h), whose bursts are kept from the reading that saw them
 * idle; those pushed out to the LRU map when it is due (stats_lru.h), their
 * bursts kept from its last reading in between.
 */

/* A slot's bursts as its last reading saw them (job TLS_JOB_NONE: none
 * to count): what a reading that skips its idle flow counts for it. */
struct slot_bursts {
	uint32_t job;
	uint64_t bursts, done_bytes;
};

struct tls_ingress_sampler {
	struct tls_stats *st;
	struct tls_job_counters *jobs;
	struct tls_lru_reader *lru;
	struct tls_slot_ways *ways; /* of the slots (slot_ways.h) */
	uint64_t prev_ns; /* the last flow reading, 0: none */
	uint64_t since;	  /* the one before */
	bool warned;
	bool every_way;				  /* tls_ingress_sampler_every_way() */
	struct tls_sparam sp[TLS_MAX_JOBS];	  /* as of the last reading */
	struct tls_sparam sp_slots[TLS_MAX_JOBS]; /* this reading's, slots */
	struct tls_sparam sp_lru[TLS_MAX_JOBS];	  /* the LRU map's last reading */
	struct tls_sparam sp_lru_next[TLS_MAX_JOBS];
	uint32_t hint[TLS_IN_SLOTS]; /* the engine's, for the flow at each slot */
	struct slot_bursts kept[TLS_IN_SLOTS];
};

static uint64_t lru_record(const struct tls_flow_key *k, const void *val, uint64_t since,
			   void *ctx);

int tls_ingress_sampler_new(struct tls_stats *st, struct tls_ingress_sampler **out)
{
	struct tls_ingress_sampler *sm = calloc(1, sizeof(*sm));
	int err;

	*out = NULL;
	if (!sm)
		return -ENOMEM;
	err = tls_job_counters_new(TLS_COUNTERS_IN, &sm->jobs);
	if (!err)
		err = tls_lru_reader_new(TLS_FLOW_MAP_IN, lru_record, sm, &sm->lru);
	if (!err)
		err = tls_slot_ways_new(TLS_FLOW_MAP_IN, &sm->ways);
	if (err) {
		tls_ingress_sampler_free(sm);
		return err;
	}
	sm->st = st;
	*out = sm;
	return 0;
}

void tls_ingress_sampler_free(struct tls_ingress_sampler *sm)
{
	if (!sm)
		return;
	tls_job_counters_free(sm->jobs);
	tls_lru_reader_free(sm->lru);
	tls_slot_ways_free(sm->ways);
	free(sm);
}

void tls_ingress_sampler_every_way(struct tls_ingress_sampler *sm, bool every_way)
{
	sm->every_way = every_way;
}

unsigned int tls_ingress_sampler_visits(const struct tls_ingress_sampler *sm)
{
	struct tls_slot_ways_info wi;

	if (sm->every_way)
		return 0;
	tls_slot_ways_info(sm->ways, &wi);
	return wi.last_visits;
}

static void read_failed(struct tls_ingress_sampler *sm, const char *what, int err)
{
	if (!sm->warned)
		pr_warn("stats: cannot read %s (ingress): %s\n", what, strerror(-err));
	sm->warned = true;
}

static void feed_job(__u32 job, const void *sum, void *ctx)
{
	const struct tls_job_in *in = sum;
	struct tls_ingress_sampler *sm = ctx;

	tls_stats_add_job(sm->st, job, in->bytes);
}

/* A record's bursts to sp[job]: a flow with at least one ended. */
static void count_bursts(struct tls_sparam *sp, const struct slot_bursts *b)
{
	if (b->job >= TLS_MAX_JOBS || !b->bursts)
		return;
	sp[b->job].bursts += b->bursts;
	sp[b->job].bytes += b->done_bytes;
	sp[b->job].flows++;
}

/* One record: to the engine as the egress flows go (bytes: those with
 * payload, active: when payload came), and its bursts to sp[job]. */
static void feed_flow(struct tls_ingress_sampler *sm, const struct tls_flow_key *k,
		      const struct tls_flow_in *v, uint64_t since, struct tls_sparam *sp,
		      uint32_t *hint)
{
	struct tls_flow f = {
		.first_ns = v->first_ns,
		.last_ns = v->last_ns ? v->last_ns : v->first_ns,
		.bytes = v->data_bytes,
		.packets = v->packets,
		.job = v->job,
	};

	if (v->job == TLS_JOB_NONE || v->job >= TLS_MAX_JOBS)
		return;
	tls_stats_add_flow_hint(sm->st, k, &f, since, hint);
	count_bursts(sp, &(struct slot_bursts){ v->job, v->bursts, v->done_bytes });
}

static int slot_one(__u32 slot, const struct tls_flow_key *k, const struct tls_flow_in *v,
		    void *ctx)
{
	struct tls_ingress_sampler *sm = ctx;

	if (slot >= TLS_IN_SLOTS)
		return 0;
	sm->kept[slot] = (struct slot_bursts){
		.job = v->job < TLS_MAX_JOBS ? v->job : TLS_JOB_NONE,
		.bursts = v->bursts,
		.done_bytes = v->done_bytes,
	};
	/* a record of no job is not fed: no hint of an earlier flow's stays
	 * for it, which a skip would feed as this slot's (defensive: the
	 * classifier seals a record only with a job) */
	if (sm->kept[slot].job == TLS_JOB_NONE)
		sm->hint[slot] = 0;
	feed_flow(sm, k, v, sm->since, sm->sp_slots, &sm->hint[slot]);
	return 0;
}

/* A slot's flow, idle, not read (slot_ways.h): to the engine as it was
 * (read after all if the engine refuses: the flow moved in its table, or
 * it had no room for it, TLS_STATS_HINT_RETRY), and its bursts as the
 * reading that saw it idle counted them. A flow the engine will not track
 * (hint 0: history) is not fed; its bursts still count. */
static int slot_skipped(__u32 slot, void *ctx)
{
	struct tls_ingress_sampler *sm = ctx;

	if (slot >= TLS_IN_SLOTS)
		return TLS_SLOT_READ;
	if (sm->hint[slot] && !tls_stats_flow_unchanged(sm->st, &sm->hint[slot]))
		return TLS_SLOT_READ;
	count_bursts(sm->sp_slots, &sm->kept[slot]);
	return 0;
}

/* A flow pushed out of its slot. Active when its last packet came: a
 * pull's flow receives ACKs alone. */
static uint64_t lru_record(const struct tls_flow_key *k, const void *val, uint64_t since, void *ctx)
{
	const struct tls_flow_in *v = val;
	struct tls_ingress_sampler *sm = ctx;

	feed_flow(sm, k, v, since, sm->sp_lru_next, NULL);
	return v->seen_ns ? v->seen_ns : v->first_ns;
}

/* Every flow: 0, or the first error (the flows read before it were fed). */
static int read_flows(struct tls_ingress_sampler *sm, const struct tls_maps *m, uint64_t now)
{
	struct tls_sampler_opts so;
	struct tls_lru_opts o;
	bool read;
	int err, err2;

	tls_sampler_opts_defaults(&so);
	o.quiet_ns = so.quiet_ns;
	o.prune_ns = so.prune_ns;
	o.slack_ns = tls_stats_get_conf(sm->st)->clock_slack_ns;
	memset(sm->sp_slots, 0, sizeof(sm->sp_slots));
	err = tls_for_each_in_slot_flow_ways(m, sm->every_way ? NULL : sm->ways, slot_one,
					     slot_skipped, sm);
	if (err)
		read_failed(sm, "the flow slots", err);
	memset(sm->sp_lru_next, 0, sizeof(sm->sp_lru_next));
	err2 = tls_lru_read(sm->lru, m, &o, now, &read);
	if (err2)
		read_failed(sm, "the flow map", err2);
	else if (read)
		memcpy(sm->sp_lru, sm->sp_lru_next, sizeof(sm->sp_lru));
	if (!err && !err2)
		for (unsigned int j = 0; j < TLS_MAX_JOBS; j++) {
			sm->sp[j].bursts = sm->sp_slots[j].bursts + sm->sp_lru[j].bursts;
			sm->sp[j].bytes = sm->sp_slots[j].bytes + sm->sp_lru[j].bytes;
			sm->sp[j].flows = sm->sp_slots[j].flows + sm->sp_lru[j].flows;
		}
	return err ? err : err2;
}

int tls_ingress_tick(struct tls_ingress_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns, bool flows)
{
	int err;

	if (!tls_maps_have_ingress(m))
		return -EBADF;
	err = tls_stats_begin(sm->st, now_ns);
	if (err)
		return err;
	tls_job_counters_want(sm->jobs, TLS_JOB_NONE);
	for (unsigned int i = 0; i < njobs; i++)
		tls_job_counters_want(sm->jobs, jobs[i]);
	err = tls_job_counters_read(sm->jobs, m, feed_job, sm);
	if (err)
		read_failed(sm, "the job counters", err);
	if (flows || !sm->prev_ns) {
		sm->since = sm->prev_ns ? sm->prev_ns : now_ns;
		tls_stats_flows_read(sm->st);
		err = read_flows(sm, m, now_ns);
		sm->prev_ns = now_ns;
	}
	tls_stats_end(sm->st);
	return err;
}

void tls_ingress_sparam(const struct tls_ingress_sampler *sm, uint32_t job, struct tls_sparam *out)
{
	if (job < TLS_MAX_JOBS)
		*out = sm->sp[job];
	else
		memset(out, 0, sizeof(*out));
}

double tls_sparam_bytes(const struct tls_sparam *p)
{
	return p->bursts ? (double)p->bytes / (double)p->bursts : NAN;
}

void tls_ingress_reset_job(const struct tls_maps *m, uint32_t job)
{
	int err = tls_job_counters_zero(m, TLS_COUNTERS_IN, job);

	/* no ingress counter (-EBADF): nothing to reset */
	if (err && err != -EBADF)
		pr_warn("cannot reset job %u's ingress counters: %s\n", job, strerror(-err));
}
