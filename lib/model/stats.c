// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics engine (see stats.h for the model and the API).
 *
 * Per sample, end() first takes the job counters' differences (their
 * aggregate decides whether the link was saturated, a verdict kept in a
 * short history). In a sample that carries a reading of the flows it then
 * makes two passes over the tracked flows: each flow's difference and
 * active time since its last reading (and whether it is a member of its
 * job's n), then the accumulation of every active flow interval into its
 * flow, its job, the (job, n) observation and the global totals, its
 * saturated part taken from the verdicts the interval spans. Cost: O(jobs
 * fed), plus O(flows tracked) when flows are read, and O(observations)
 * for each job's B_req (req_update); no allocation.
 *
 * Flows live in a dense array (so a pass touches only used entries) indexed
 * by an open-addressing hash table with linear probing and backward-shift
 * deletion (no tombstones to clean up). Observations are a small array
 * looked up through a per-job cache.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "stats_group.h"

#define NS_PER_S   1e9
#define SLOT_EMPTY UINT32_MAX
#define OBS_NONE   UINT32_MAX

/*
 * An observation counts in the fit only where spotDNN uses P at all, i.e.
 * B_req > B_ps / n, and a little above it: near equality P solved is a ratio
 * of two small differences, and measurement noise in either blows it up.
 */
#define REGIME_MARGIN 0.05

/* The link's verdicts of the last HIST samples: enough for flows read every
 * 100 ms (or a quiet LRU map every 100 ms) at a 10 ms period, many times. */
#define HIST 1024

struct job_st {
	bool known;	  /* mentioned by a sample since created or forgotten */
	bool live;	  /* in tls_stats.live */
	bool has_base;	  /* base is a counter value to take differences from */
	uint32_t fed_seq; /* the sample it was last fed in */
	uint64_t base, cur;
	uint64_t base_t; /* the sample base was read in */
	uint64_t bytes, active_ns, sat_active_ns;
	uint64_t grew_ns; /* the last sample its counter grew in; 0 never */
	double rate, rate_avg;
	struct tls_stats_acc flows;
	unsigned int n, nflows;
	uint32_t obs; /* cache: the observation (job, n) last used */
	uint32_t req_obs; /* its B_req's observation (req_update); OBS_NONE: none */
	unsigned int n_hosts, n_flows;
	uint64_t iter_ns, window_ns;
	/* Its n settles once held for its window (stats.h). Until then pend
	 * is what its periods added to the observation (job, n), taken out
	 * again (to transit) if n changes first. */
	bool settled;
	uint64_t n_since;   /* the sample its n was first counted in */
	uint32_t pend_obs;  /* the observation pend went to; OBS_NONE: none yet */
	bool pend_new;	    /* which pend created */
	uint64_t pend_last; /* that observation's last_ns before pend */
	struct tls_stats_acc pend, transit;
};

struct flow_st {
	/* the caller's hint it was last fed through (tls_stats_add_flow_hint),
	 * so that tls_stats_flow_unchanged() knows the hint is still its */
	const uint32_t *hint_at;
	struct tls_flow_key key;
	uint32_t job;
	uint32_t hslot; /* its slot in the hash index */
	uint64_t hash;
	uint32_t fed_seq;
	bool has_base;
	uint64_t base_bytes, base_first; /* at the last sample applied */
	uint64_t base_t;		 /* since when delta counts: the time base_bytes
					  * was read, or for a new flow the time its
					  * source was read before */
	uint64_t cur_bytes, cur_first, cur_last;
	uint64_t delta, adt, span; /* this sample: bytes, active time, time since base_t */
	uint64_t aend;		   /* the end of that active time */
	/* its packets (skbs), and what they say about its pace */
	uint64_t base_pkts, cur_pkts;
	uint64_t gap_ns; /* its packet spacing while it sends (0: not known yet) */
	bool sending;	 /* it was still sending at its last reading */
	bool placed;	 /* this sample: the start of its active time was estimated */
	uint64_t added_ns, last_active_ns;
	uint64_t rate_t; /* when rate_avg was last updated */
	double rate, rate_avg;
	struct tls_stats_acc acc;
	uint64_t burst_t, iter_ns; /* its last burst's start, its iteration */
	double host_share;	   /* this period: of its host's bytes (stats_group.h) */
	uint32_t member_seq;	   /* the sample it was last a member of its job's group in */
	uint32_t grouped_seq;	   /* the sample it was put among the group items in */
};

struct obs_st {
	bool used, retired;
	uint32_t job;
	double ret_req; /* retired: its job's B_req when it was forgotten (NaN: none) */
	unsigned int n;
	uint64_t first_ns, last_ns;
	struct tls_stats_acc acc;
};

struct tls_stats {
	struct tls_stats_conf c;

	bool open;	   /* between begin() and end() */
	uint64_t flow_gen; /* tls_stats_flow_gen; survives a reset */
	bool have_prev;	   /* t_prev is the time of an applied sample */
	uint32_t seq;	   /* sample number, for fed_seq marks */
	uint64_t now, t_prev;

	/* the link */
	uint64_t time_ns, sat_ns, sat_bytes;
	double req_bytes, req_ns; /* the jobs' B_req observations pooled (req_update) */
	double ret_bytes, ret_ns; /* those of the jobs forgotten since the reset */
	/* ring of (sample time, saturated time so far, the period's verdict) */
	uint64_t hist_t[HIST], hist_cum[HIST];
	bool hist_sat[HIST];
	unsigned int hist_n, hist_head; /* entries, the newest */
	double rate, rate_avg;
	bool saturated;
	uint64_t samples, skipped, rejected, resets;
	uint64_t flows_expired, flows_evicted, flows_dropped, obs_evicted;
	struct tls_stats_acc global; /* every flow period */

	struct job_st job[TLS_MAX_JOBS];
	uint32_t fed[TLS_MAX_JOBS]; /* jobs fed in the open sample */
	unsigned int nfed;
	bool flows_read; /* the open sample carries a reading of the flows */
	/* The jobs the end of a sample visits (its loops over jobs): those with
	 * flows, and those whose n, group or settling may still change; a job
	 * leaves once at rest (job_at_rest()). The loops went over all
	 * TLS_MAX_JOBS before: 300 kB of job_st, four times a reading, cold. */
	uint32_t live[TLS_MAX_JOBS];
	unsigned int nlive;
	uint32_t members[TLS_MAX_JOBS];
	uint32_t hosts[TLS_MAX_JOBS];
	uint64_t job_iter[TLS_MAX_JOBS];
	struct tls_group_item *grp; /* max_flows: the members of a sample */
	/* The flow indexes of the last sample's members in their sorted order:
	 * this sample's are put in that order first, so that the sort finds
	 * them sorted while the members stay (a sort of 1,024 a reading was a
	 * twentieth of tlsd's CPU without scrapes). Only an order: an index
	 * that names another flow now costs a sort, not a wrong count. */
	uint32_t *grp_order;
	size_t ngrp_order;

	struct flow_st *flow; /* dense: [0, nflows) */
	unsigned int nflows;
	uint32_t *slot; /* hash index: flow indexes, SLOT_EMPTY */
	uint32_t mask;
	unsigned int hand; /* clock hand for eviction from a full table */

	struct obs_st *obs;
	unsigned int nobs;
};

static const double nan_v = NAN;

void tls_stats_conf_defaults(struct tls_stats_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->sat_pct = 90;
	c->smooth_ns = 1000ULL * 1000 * 1000;
	c->group_ns = 1000ULL * 1000 * 1000;
	c->flow_idle_ns = 60ULL * 1000 * 1000 * 1000;
	/* HZ=250, the common distribution setting; tlsd sets the real tick */
	c->clock_slack_ns = 4ULL * 1000 * 1000;
	c->min_obs_ns = 1000ULL * 1000 * 1000;
	c->max_flows = 4096;
	c->max_obs = 256;
}

int tls_stats_conf_check(const struct tls_stats_conf *c, char *err, size_t errlen)
{
	const char *what = NULL;

	if (c->sat_pct < 1 || c->sat_pct > 100)
		what = "saturation threshold: must be 1..100 %";
	else if (!c->smooth_ns)
		what = "smoothing time constant: must be > 0";
	else if (!c->group_ns)
		what = "worker group window: must be > 0";
	else if (!c->flow_idle_ns)
		what = "flow idle timeout: must be > 0";
	else if (c->clock_slack_ns > 1000ULL * 1000 * 1000)
		what = "clock slack: must be <= 1 s";
	else if (c->max_flows < 1 || c->max_flows > (1u << 24))
		what = "maximum flows: must be 1..16777216";
	else if (c->max_obs < 1 || c->max_obs > 65536)
		what = "maximum observations: must be 1..65536";
	if (!what)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "stats: bad %s", what);
	return -EINVAL;
}

int tls_stats_new(const struct tls_stats_conf *c, struct tls_stats **out)
{
	struct tls_stats *s;
	uint32_t cap = 2;
	int err;

	*out = NULL;
	err = tls_stats_conf_check(c, NULL, 0);
	if (err)
		return err;
	/* load factor <= 1/2: probes stay short */
	while (cap < 2 * c->max_flows)
		cap <<= 1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = *c;
	s->flow = calloc(c->max_flows, sizeof(*s->flow));
	s->slot = malloc(cap * sizeof(*s->slot));
	s->obs = calloc(c->max_obs, sizeof(*s->obs));
	s->grp = calloc(c->max_flows, sizeof(*s->grp));
	s->grp_order = calloc(c->max_flows, sizeof(*s->grp_order));
	if (!s->flow || !s->slot || !s->obs || !s->grp || !s->grp_order) {
		tls_stats_free(s);
		return -ENOMEM;
	}
	s->mask = cap - 1;
	tls_stats_reset(s);
	*out = s;
	return 0;
}

void tls_stats_free(struct tls_stats *s)
{
	if (!s)
		return;
	free(s->flow);
	free(s->slot);
	free(s->obs);
	free(s->grp);
	free(s->grp_order);
	free(s);
}

const struct tls_stats_conf *tls_stats_get_conf(const struct tls_stats *s)
{
	return &s->c;
}

void tls_stats_set_link_rate(struct tls_stats *s, uint64_t bps)
{
	s->c.link_bps = bps;
	s->flow_gen++; /* B_ps, and so the estimates */
}

void tls_stats_reset(struct tls_stats *s)
{
	struct tls_stats_conf c = s->c;
	struct flow_st *flow = s->flow;
	struct obs_st *obs = s->obs;
	uint32_t *slot = s->slot, mask = s->mask;
	uint64_t gen = s->flow_gen;
	struct tls_group_item *grp = s->grp;
	uint32_t *grp_order = s->grp_order;

	memset(s, 0, sizeof(*s));
	s->flow_gen = gen + 1;
	s->grp = grp;
	s->grp_order = grp_order;
	s->c = c;
	s->flow = flow;
	s->obs = obs;
	s->slot = slot;
	s->mask = mask;
	memset(slot, 0xff, (size_t)(mask + 1) * sizeof(*slot));
	memset(obs, 0, c.max_obs * sizeof(*obs));
	for (unsigned int j = 0; j < TLS_MAX_JOBS; j++)
		s->job[j].obs = s->job[j].pend_obs = s->job[j].req_obs = OBS_NONE;
}

/* ---- the flow table ---- */

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser: every input bit moves every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t flow_hash(const struct tls_flow_key *k, uint32_t job)
{
	uint64_t w[5], h = job;

	_Static_assert(sizeof(*k) == sizeof(w), "tls_flow_key is five words");
	memcpy(w, k, sizeof(w));
	for (int i = 0; i < 5; i++)
		h = mix64(h ^ w[i]);
	return h;
}

static bool flow_eq(const struct flow_st *f, const struct tls_flow_key *k, uint32_t job, uint64_t h)
{
	return f->hash == h && f->job == job && !memcmp(&f->key, k, sizeof(*k));
}

static struct flow_st *flow_find(struct tls_stats *s, const struct tls_flow_key *k, uint32_t job,
				 uint64_t h, uint32_t *slot_out)
{
	uint32_t i = h & s->mask;

	while (s->slot[i] != SLOT_EMPTY) {
		struct flow_st *f = &s->flow[s->slot[i]];

		if (flow_eq(f, k, job, h))
			return f;
		i = (i + 1) & s->mask;
	}
	*slot_out = i;
	return NULL;
}

/* Remove flow idx: backward-shift deletion in the index, then move the last
 * dense entry into its place. Its accumulations already went to its job,
 * its observations and the global totals, so only per-flow detail is lost. */
static void flow_delete(struct tls_stats *s, uint32_t idx)
{
	uint32_t i = s->flow[idx].hslot, j = i, last;

	for (;;) {
		uint32_t h;

		j = (j + 1) & s->mask;
		if (s->slot[j] == SLOT_EMPTY)
			break;
		h = s->flow[s->slot[j]].hash & s->mask;
		/* the entry at j may stay iff its home h lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		s->slot[i] = s->slot[j];
		s->flow[s->slot[i]].hslot = i;
		i = j;
	}
	s->slot[i] = SLOT_EMPTY;
	s->job[s->flow[idx].job].nflows--;
	last = --s->nflows;
	if (idx != last) {
		s->flow[idx] = s->flow[last];
		s->slot[s->flow[idx].hslot] = idx;
		/* its caller's hint names the old place: until it is fed
		 * through it again, tls_stats_flow_unchanged() refuses it */
		s->flow[idx].hint_at = NULL;
	}
}

/*
 * Make room in a full table: the first flow at or after the clock hand that
 * is neither fed in this sample nor a member of its job's current group, else
 * the first one not fed in this sample. Amortised O(1) under churn; a table
 * full of flows all sending now refuses the newcomer instead (counted).
 */
static bool flow_evict_one(struct tls_stats *s)
{
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int k = 0; k < s->nflows; k++) {
			uint32_t idx = (s->hand + k) % s->nflows;
			struct flow_st *f = &s->flow[idx];

			if (f->fed_seq == s->seq)
				continue;
			if (pass == 0 && f->last_active_ns &&
			    s->now - f->last_active_ns <= s->c.group_ns)
				continue;
			flow_delete(s, idx);
			s->hand = s->nflows ? idx % s->nflows : 0;
			s->flows_evicted++;
			return true;
		}
	}
	return false;
}

/* Job j is to be visited by the end of each sample (tls_stats.live). */
static void job_live(struct tls_stats *s, uint32_t job)
{
	if (!s->job[job].live) {
		s->job[job].live = true;
		s->live[s->nlive++] = job;
	}
}

/* Nothing the end of a sample does to job j would change it: no flows, no
 * members, n settled at 0. */
static bool job_at_rest(const struct tls_stats *s, uint32_t job)
{
	const struct job_st *j = &s->job[job];

	return !j->nflows && !j->n && !s->members[job] && !j->n_flows && !j->n_hosts &&
	       j->settled && j->n_since;
}

/* ---- feeding ---- */

int tls_stats_begin(struct tls_stats *s, uint64_t now_ns)
{
	if (s->have_prev && now_ns < s->t_prev) {
		s->rejected++;
		s->open = false;
		return -ERANGE;
	}
	s->open = true;
	/* 0 is the mark of a record never fed: a wrap skips it (2^32
	 * samples: 1.4 years at 100 a second) */
	if (++s->seq == 0)
		s->seq = 1;
	s->now = now_ns;
	s->nfed = 0;
	s->flows_read = false;
	return 0;
}

int tls_stats_add_job(struct tls_stats *s, uint32_t job, uint64_t bytes)
{
	struct job_st *j;

	if (!s->open)
		return -EBADFD;
	if (job >= TLS_MAX_JOBS)
		return -EINVAL;
	j = &s->job[job];
	if (j->fed_seq != s->seq) {
		j->fed_seq = s->seq;
		s->fed[s->nfed++] = job;
		j->cur = bytes;
		if (!j->live && !job_at_rest(s, job))
			job_live(s, job);
	} else if (bytes > j->cur) {
		j->cur = bytes;
	}
	j->known = true;
	return 0;
}

/* The newer of two records of one flow in one sample: a later first packet
 * is a newer incarnation (a socket closed and its 4-tuple reused, or the
 * closed socket's final record next to the live one); else more bytes. */
static bool newer_record(const struct flow_st *f, const struct tls_flow *r)
{
	if (r->first_ns != f->cur_first)
		return r->first_ns > f->cur_first;
	return r->bytes > f->cur_bytes;
}

int tls_stats_add_flow(struct tls_stats *s, const struct tls_flow_key *key,
		       const struct tls_flow *r)
{
	return tls_stats_add_flow_since(s, key, r, s->have_prev ? s->t_prev : s->now);
}

/* The record of a tracked flow f, in this sample. */
static void flow_fed(struct tls_stats *s, struct flow_st *f, const struct tls_flow *r)
{
	if (f->fed_seq == s->seq && !newer_record(f, r))
		return;
	f->fed_seq = s->seq;
	f->cur_bytes = r->bytes;
	f->cur_first = r->first_ns;
	f->cur_last = r->last_ns;
	f->cur_pkts = r->packets;
}

/*
 * A record whose last packet is older than the idle timeout is history (the
 * closed flows tls_flows keeps): tracking it would only evict live flows,
 * and it would expire at once.
 */
static bool is_history(const struct tls_stats *s, const struct tls_flow *r)
{
	return r->last_ns && r->last_ns + s->c.flow_idle_ns < s->now;
}

/* A flow not tracked yet, at its free index slot; NULL if not taken. */
static struct flow_st *flow_add(struct tls_stats *s, const struct tls_flow_key *key,
				const struct tls_flow *r, uint64_t since_ns, uint64_t h,
				uint32_t slot)
{
	struct flow_st *f;

	if (is_history(s, r))
		return NULL;
	if (s->nflows == s->c.max_flows) {
		if (!flow_evict_one(s)) {
			s->flows_dropped++;
			return NULL;
		}
		/* the deletion moved entries: find the free slot again */
		if (flow_find(s, key, r->job, h, &slot))
			return NULL; /* cannot happen: it was not there */
	}
	f = &s->flow[s->nflows];
	memset(f, 0, sizeof(*f));
	f->key = *key;
	f->job = r->job;
	f->hash = h;
	f->hslot = slot;
	f->fed_seq = s->seq;
	f->cur_bytes = r->bytes;
	f->cur_first = r->first_ns;
	f->cur_last = r->last_ns;
	f->cur_pkts = r->packets;
	f->added_ns = s->now;
	f->rate_t = s->now;
	f->base_t = since_ns <= s->now ? since_ns : s->now;
	s->slot[slot] = s->nflows++;
	s->job[r->job].nflows++;
	s->job[r->job].known = true;
	job_live(s, r->job);
	return f;
}

int tls_stats_add_flow_hint(struct tls_stats *s, const struct tls_flow_key *key,
			    const struct tls_flow *r, uint64_t since_ns, uint32_t *hint)
{
	struct flow_st *f;
	uint32_t slot = 0;
	uint64_t h;

	if (!s->open)
		return -EBADFD;
	if (r->job == TLS_JOB_NONE || r->job >= TLS_MAX_JOBS)
		return -EINVAL;
	s->flows_read = true;
	if (hint && *hint && *hint <= s->nflows) {
		f = &s->flow[*hint - 1];
		if (f->job == r->job && !memcmp(&f->key, key, sizeof(*key))) {
			flow_fed(s, f, r);
			f->hint_at = hint;
			return 0;
		}
	}
	h = flow_hash(key, r->job);
	f = flow_find(s, key, r->job, h, &slot);
	if (f)
		flow_fed(s, f, r);
	else
		f = flow_add(s, key, r, since_ns, h, slot);
	if (f)
		f->hint_at = hint;
	if (hint)
		*hint = f		 ? (uint32_t)(f - s->flow) + 1 :
			is_history(s, r) ? 0 :
					   TLS_STATS_HINT_RETRY;
	return 0;
}

bool tls_stats_flow_unchanged(struct tls_stats *s, const uint32_t *hint)
{
	struct flow_st *f;

	if (!s->open || !hint || !*hint || *hint > s->nflows)
		return false;
	f = &s->flow[*hint - 1];
	/* another flow there now, or this one moved since (flow_delete) */
	if (f->hint_at != hint)
		return false;
	/* as flow_fed() with the record it was last fed: cur_* hold it */
	f->fed_seq = s->seq;
	s->flows_read = true;
	return true;
}

int tls_stats_add_flow_since(struct tls_stats *s, const struct tls_flow_key *key,
			     const struct tls_flow *r, uint64_t since_ns)
{
	return tls_stats_add_flow_hint(s, key, r, since_ns, NULL);
}

void tls_stats_flows_read(struct tls_stats *s)
{
	if (s->open)
		s->flows_read = true;
}

/* ---- applying a sample ---- */

static void ewma(double *avg, double v, double alpha)
{
	*avg += alpha * (v - *avg);
}

/* The jobs fed: differences, job-level activity; returns the aggregate. */
static uint64_t apply_jobs(struct tls_stats *s, uint64_t dt, bool first)
{
	uint64_t agg = 0;

	for (unsigned int i = 0; i < s->nfed; i++) {
		struct job_st *j = &s->job[s->fed[i]];
		uint64_t d;

		/* First seen, or missing from the samples in between (the
		 * caller left it out for a while): its difference would span
		 * periods of unknown saturation, and lumped into this one it
		 * could fake a saturated link. A baseline only. */
		if (first || !j->has_base || j->base_t != s->t_prev) {
			j->base = j->cur;
			j->base_t = s->now;
			j->has_base = true;
			j->rate = 0;
			continue;
		}
		if (j->cur >= j->base) {
			d = j->cur - j->base;
		} else {
			/* A counter reset (the job id was reused and zeroed):
			 * the new value is what was sent since, within this
			 * period. The job's measurements were another job's. */
			d = j->cur;
			s->resets++;
			j->bytes = j->active_ns = j->sat_active_ns = 0;
			memset(&j->flows, 0, sizeof(j->flows));
			j->rate = j->rate_avg = 0;
		}
		j->base = j->cur;
		j->base_t = s->now;
		j->bytes += d;
		j->rate = d * NS_PER_S / dt;
		agg += d;
	}
	return agg;
}

/* Job-level activity needs the saturation verdict: a second, short loop. */
static void apply_jobs_activity(struct tls_stats *s, uint64_t dt, double alpha)
{
	for (unsigned int i = 0; i < s->nfed; i++) {
		struct job_st *j = &s->job[s->fed[i]];

		if (j->rate > 0) {
			j->grew_ns = s->now;
			j->active_ns += dt;
			if (s->saturated)
				j->sat_active_ns += dt;
		}
		ewma(&j->rate_avg, j->rate, alpha);
	}
}

/*
 * A flow's bytes and active time since its base (normally the previous
 * sample; earlier when its record was not read in every sample, as the
 * sampler does with the LRU map while it is quiet; all of it is then
 * counted in this period, saturated or not).
 *
 * Active time is the period, cut where the flow's packet stamps show it
 * started or stopped inside it: a burst shorter than the period must not be
 * stretched to it, or B_wk of short model-update bursts would be the burst's
 * bytes over a whole period. The stamps are from the coarse clock, at most
 * one tick (clock_slack_ns) behind the packet, and a flow that is sending
 * leaves gaps between its packets: a flow whose last stamp is within two
 * ticks plus four of its packet gaps (its mean spacing over the period) of
 * now may still be sending, or a flow sending slowly all along, or a steady
 * one whose last packet fell in the tick before the sample's, would lose
 * a few ms of every period; otherwise it stopped about half a tick after its
 * stamp. A silence of half the period is a stop whatever the spacing.
 *
 * Where it started: at the previous reading if it was sending then; about
 * half a tick after its first stamp if its first packet came after the
 * previous reading. Otherwise it resumed somewhere in the period after a
 * pause, and its record does not say where (it keeps its first packet ever,
 * not the burst's): its packets in the period at the spacing it had while
 * it sent before place the start, or counting it active since the previous
 * reading would add half a period to every burst of an on-off flow (B_wk
 * 5% low for bursts of a second). Without a known spacing yet, since the
 * previous reading. A placed start is an estimate (TCP resumes with a
 * window's worth at once, denser than its steady pace): such a period does
 * not count towards B_req.
 */
/*
 * A period in which the flow sent only pure ACKs (frames of 54 to 86 bytes
 * on average): it acknowledged the other direction's transfer and sent
 * none of its own. Not activity: the PS's egress flow of a worker carries
 * the ACKs of its push for as long as the push lasts, which would count the
 * push's time in the pull's active time (B_wk halved when push and pull
 * take as long). The same for the ingress flows and the pull's ACKs.
 */
#define ACK_FRAME_MAX 96
static bool acks_only(uint64_t delta, uint64_t dpk)
{
	return dpk && delta < dpk * ACK_FRAME_MAX;
}

static void flow_period(struct tls_stats *s, struct flow_st *f, bool first)
{
	uint64_t since = f->base_t, start = since, end = s->now, half = s->c.clock_slack_ns / 2,
		 min_adt, dpk = 0, tol;
	bool fresh; /* all of cur_bytes were sent since `since` */
	bool known; /* where its sending in this period started */

	f->delta = 0;
	f->adt = 0;
	f->span = s->now - since;
	if (f->fed_seq != s->seq) {
		f->sending = false;
		return; /* not reported: the record is gone (LRU) or not sampled */
	}
	fresh = !first && f->cur_first && f->cur_first + s->c.clock_slack_ns >= since;
	if (f->has_base && f->cur_first == f->base_first) {
		if (f->cur_bytes >= f->base_bytes) {
			f->delta = f->cur_bytes - f->base_bytes;
			dpk = f->cur_pkts >= f->base_pkts ? f->cur_pkts - f->base_pkts : 0;
		} else {
			f->delta = f->cur_bytes; /* reset in place */
			dpk = f->cur_pkts;
			s->resets++;
		}
	} else if (f->has_base && f->cur_first < f->base_first) {
		/* an older incarnation than the one tracked: ignore it */
		return;
	} else {
		/* new, or a new incarnation of the 4-tuple (counted as a reset):
		 * everything since its first packet if that came in this period,
		 * else only a baseline (its earlier bytes have no known time) */
		if (fresh) {
			f->delta = f->cur_bytes;
			dpk = f->cur_pkts;
		}
		if (f->has_base)
			s->resets++;
		f->gap_ns = 0;
	}
	f->base_bytes = f->cur_bytes;
	f->base_first = f->cur_first;
	f->base_pkts = f->cur_pkts;
	f->base_t = s->now;
	f->has_base = true;
	if (acks_only(f->delta, dpk))
		f->delta = 0;
	if (!f->delta || !f->span) {
		f->sending = false;
		return;
	}

	known = f->sending || fresh;
	f->placed = false;
	if (f->cur_first && f->cur_first + half > start)
		start = f->cur_first + half;
	tol = 2 * s->c.clock_slack_ns;
	if (dpk) {
		uint64_t gaps = f->span / dpk * 4, cap = f->span / 2;

		tol += gaps;
		if (tol > cap)
			tol = cap > 2 * s->c.clock_slack_ns ? cap : 2 * s->c.clock_slack_ns;
	}
	if (f->cur_last && f->cur_last + tol < end)
		end = f->cur_last + half;
	if (start > s->now)
		start = s->now;
	if (!known && f->gap_ns && dpk && end > start) {
		if (dpk * f->gap_ns < end - start)
			start = end - dpk * f->gap_ns;
		f->placed = true;
	}
	/* a burst within one clock tick: its length is unknown, at most a tick */
	min_adt = half ? half : 1000;
	if (min_adt > f->span)
		min_adt = f->span;
	f->adt = end > start ? end - start : 0;
	if (f->adt < min_adt)
		f->adt = min_adt;
	if (f->adt > f->span)
		f->adt = f->span;
	f->aend = end > s->now ? s->now : end;
	f->last_active_ns = s->now;
	/* a burst begins where it was not sending before: its iteration */
	if (!f->sending)
		tls_group_burst(&f->iter_ns, &f->burst_t, start, s->c.flow_idle_ns);
	f->sending = end >= s->now;
	/* learn its spacing where the active time is known: an average over
	 * its packets, recent periods weighing more when they carry many */
	if (known && dpk) {
		double g = (double)f->adt / dpk, w = (double)dpk / (dpk + 32);

		f->gap_ns = f->gap_ns ? (uint64_t)(f->gap_ns + w * (g - f->gap_ns)) : (uint64_t)g;
	}
}

static void hist_push(struct tls_stats *s, bool sat)
{
	s->hist_head = (s->hist_head + 1) % HIST;
	s->hist_t[s->hist_head] = s->now;
	s->hist_cum[s->hist_head] = s->sat_ns;
	s->hist_sat[s->hist_head] = sat;
	if (s->hist_n < HIST)
		s->hist_n++;
}

static unsigned int hist_at(const struct tls_stats *s, unsigned int k)
{
	/* k = 0 is the oldest entry */
	return (s->hist_head + HIST - (s->hist_n - 1) + k) % HIST;
}

/* Saturated time up to x, the clock of the samples; *known false when x is
 * older than the history (then counted as not saturated). */
static uint64_t sat_until(const struct tls_stats *s, uint64_t x, bool *known)
{
	unsigned int lo = 0, hi = s->hist_n - 1, i, p;

	if (x <= s->hist_t[hist_at(s, 0)]) {
		if (x < s->hist_t[hist_at(s, 0)])
			*known = false;
		return s->hist_cum[hist_at(s, 0)];
	}
	if (x >= s->hist_t[s->hist_head])
		return s->hist_cum[s->hist_head];
	/* the first entry at or after x: x lies in the period it ends */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (s->hist_t[hist_at(s, mid)] >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	i = hist_at(s, lo);
	p = hist_at(s, lo - 1);
	return s->hist_cum[p] + (s->hist_sat[i] ? x - s->hist_t[p] : 0);
}

/* Saturated part of the active time (aend - adt, aend]. */
static uint64_t sat_overlap(const struct tls_stats *s, const struct flow_st *f, bool *known)
{
	uint64_t a = f->aend - f->adt, v;

	*known = true;
	v = sat_until(s, f->aend, known) - sat_until(s, a, known);
	return v > f->adt ? f->adt : v;
}

static void acc_add(struct tls_stats_acc *a, uint64_t bytes, uint64_t adt, uint64_t sat_adt,
		    bool pure_unsat, unsigned int n)
{
	a->bytes += bytes;
	a->active_ns += adt;
	a->sat_active_ns += sat_adt;
	if (pure_unsat) {
		a->unsat_bytes += bytes;
		a->unsat_ns += adt;
	}
	a->n_ns += (double)n * adt;
}

static void acc_merge(struct tls_stats_acc *a, const struct tls_stats_acc *b)
{
	a->bytes += b->bytes;
	a->active_ns += b->active_ns;
	a->sat_active_ns += b->sat_active_ns;
	a->unsat_bytes += b->unsat_bytes;
	a->unsat_ns += b->unsat_ns;
	a->n_ns += b->n_ns;
}

/* The observation (job, n), created (or taking the stalest slot) if new. */
static struct obs_st *obs_get(struct tls_stats *s, uint32_t job, unsigned int n, bool *created)
{
	struct job_st *j = &s->job[job];
	struct obs_st *o, *victim = NULL;
	unsigned int i, hole = OBS_NONE;

	*created = false;
	if (j->obs != OBS_NONE) {
		o = &s->obs[j->obs];
		if (o->used && !o->retired && o->job == job && o->n == n)
			return o;
	}
	for (i = 0; i < s->nobs; i++) {
		o = &s->obs[i];
		if (!o->used) {
			/* one a transition made and took back */
			if (hole == OBS_NONE)
				hole = i;
			continue;
		}
		if (!o->retired && o->job == job && o->n == n) {
			j->obs = i;
			return o;
		}
	}
	*created = true;
	if (hole != OBS_NONE) {
		i = hole;
	} else if (s->nobs < s->c.max_obs) {
		i = s->nobs++;
	} else {
		/* full: the one updated longest ago goes */
		for (i = 0; i < s->nobs; i++)
			if (!victim || s->obs[i].last_ns < victim->last_ns)
				victim = &s->obs[i];
		i = victim - s->obs;
		s->obs_evicted++;
	}
	o = &s->obs[i];
	memset(o, 0, sizeof(*o));
	o->used = true;
	o->job = job;
	o->n = n;
	o->first_ns = s->now;
	j->obs = i;
	return o;
}

/* Whether o may give its job's B_req: unsaturated for min_obs_ns. */
static bool req_usable(const struct tls_stats *s, const struct obs_st *o)
{
	return o->used && !o->retired && o->acc.unsat_ns && o->acc.unsat_ns >= s->c.min_obs_ns;
}

/*
 * Each job's B_req observation and the host's pool of them, after the
 * observations changed (a reading, a job forgotten): two passes over the
 * observations, so a query needs none.
 */
static void req_update(struct tls_stats *s)
{
	unsigned int i;

	for (i = 0; i < s->nobs; i++)
		if (s->obs[i].used)
			s->job[s->obs[i].job].req_obs = OBS_NONE;
	for (i = 0; i < s->nobs; i++) {
		const struct obs_st *o = &s->obs[i];
		struct job_st *j = &s->job[o->job];

		if (req_usable(s, o) && (j->req_obs == OBS_NONE || s->obs[j->req_obs].n > o->n))
			j->req_obs = i;
	}
	s->req_bytes = s->req_ns = 0;
	for (i = 0; i < s->nobs; i++) {
		const struct obs_st *o = &s->obs[i];

		if (req_usable(s, o) && s->job[o->job].req_obs == i) {
			s->req_bytes += o->acc.unsat_bytes;
			s->req_ns += o->acc.unsat_ns;
		}
	}
}

/* Each job's n: its workers active within its window (stats_group.h),
 * hosts or flows; each member flow's share of its host's bytes. */
/* Flow k among this sample's group items (once). */
static void group_item(struct tls_stats *s, uint32_t k, size_t *cnt)
{
	struct flow_st *f = &s->flow[k];
	struct tls_group_item *it = &s->grp[(*cnt)++];

	f->grouped_seq = s->seq;
	it->job = f->job;
	it->idx = k;
	it->family = f->key.family;
	memcpy(it->addr, f->key.raddr, sizeof(it->addr));
	it->delta = f->delta;
}

static void count_members(struct tls_stats *s)
{
	size_t cnt = 0;

	for (unsigned int k = 0; k < s->nflows; k++) {
		struct flow_st *f = &s->flow[k];
		struct job_st *j = &s->job[f->job];

		j->iter_ns = s->job_iter[f->job];
		j->window_ns = tls_group_window(s->c.window_ns, s->c.group_ns, j->iter_ns);
		f->host_share = 1.0;
		if (!f->last_active_ns || s->now - f->last_active_ns > j->window_ns)
			continue;
		s->members[f->job]++;
		f->member_seq = s->seq;
	}
	/* the members in the last sample's order, then the others */
	for (size_t o = 0; o < s->ngrp_order; o++) {
		uint32_t k = s->grp_order[o];

		if (k < s->nflows && s->flow[k].member_seq == s->seq &&
		    s->flow[k].grouped_seq != s->seq)
			group_item(s, k, &cnt);
	}
	for (unsigned int k = 0; k < s->nflows; k++)
		if (s->flow[k].member_seq == s->seq && s->flow[k].grouped_seq != s->seq)
			group_item(s, k, &cnt);
	tls_group_hosts(s->grp, cnt, s->hosts);
	for (size_t i = 0; i < cnt; i++) {
		s->flow[s->grp[i].idx].host_share = s->grp[i].share;
		s->grp_order[i] = s->grp[i].idx;
	}
	s->ngrp_order = cnt;
	for (unsigned int l = 0; l < s->nlive; l++) {
		uint32_t i = s->live[l];

		s->job[i].n_flows = s->members[i];
		s->job[i].n_hosts = s->hosts[i];
		if (!s->c.n_flows)
			s->members[i] = s->hosts[i];
	}
}

/*
 * A job's n settles once held for its window (stats.h). Its periods go to
 * the observation (job, n) at once, so that the current n is observed
 * while it holds, and are kept in pend too: if n changes before it
 * settled, they are taken out of the observation again (the observation
 * goes if they made it) and count as transitional.
 */
static void acc_sub(struct tls_stats_acc *a, const struct tls_stats_acc *b)
{
	a->bytes -= b->bytes;
	a->active_ns -= b->active_ns;
	a->sat_active_ns -= b->sat_active_ns;
	a->unsat_bytes -= b->unsat_bytes;
	a->unsat_ns -= b->unsat_ns;
	a->n_ns -= b->n_ns;
}

static void settle_undo(struct tls_stats *s, uint32_t job, struct job_st *j)
{
	struct obs_st *o;

	if (j->pend_obs == OBS_NONE || (!j->pend.active_ns && !j->pend.bytes))
		return;
	acc_merge(&j->transit, &j->pend);
	o = &s->obs[j->pend_obs];
	/* evicted and reused meanwhile (a full table): nothing of pend in it */
	if (!o->used || o->retired || o->job != job || o->n != j->n ||
	    o->acc.active_ns < j->pend.active_ns || o->acc.bytes < j->pend.bytes)
		return;
	if (j->pend_new) {
		memset(o, 0, sizeof(*o));
		if (j->obs == j->pend_obs)
			j->obs = OBS_NONE;
		while (s->nobs && !s->obs[s->nobs - 1].used)
			s->nobs--;
		return;
	}
	acc_sub(&o->acc, &j->pend);
	o->last_ns = j->pend_last;
}

/* Each job whose n was counted anew in this sample starts to hold it. */
static void settle_begin(struct tls_stats *s)
{
	for (unsigned int l = 0; l < s->nlive; l++) {
		uint32_t i = s->live[l];
		struct job_st *j = &s->job[i];

		if (s->members[i] == j->n && j->n_since)
			continue;
		if (!j->settled)
			settle_undo(s, i, j);
		memset(&j->pend, 0, sizeof(j->pend));
		j->pend_obs = OBS_NONE;
		j->settled = false;
		j->n_since = s->now;
	}
}

/* A job's active flow period, to its observation (job, n). */
static void settle_add(struct tls_stats *s, struct job_st *j, uint32_t job, unsigned int n,
		       uint64_t bytes, uint64_t adt, uint64_t sat_adt, bool pure)
{
	bool created;
	struct obs_st *o = obs_get(s, job, n, &created);

	if (!j->settled && j->pend_obs == OBS_NONE) {
		j->pend_new = created;
		j->pend_obs = o - s->obs;
		j->pend_last = o->last_ns;
	}
	acc_add(&o->acc, bytes, adt, sat_adt, pure, n);
	o->last_ns = s->now;
	if (!j->settled)
		acc_add(&j->pend, bytes, adt, sat_adt, pure, n);
}

/* The jobs whose n has held for their window keep what it observed. */
static void settle_end(struct tls_stats *s)
{
	for (unsigned int l = 0; l < s->nlive; l++) {
		struct job_st *j = &s->job[s->live[l]];

		if (!j->settled && s->now - j->n_since >= j->window_ns)
			j->settled = true;
	}
}

int tls_stats_end(struct tls_stats *s)
{
	bool first = !s->have_prev;
	uint64_t dt, agg;
	double alpha;

	if (!s->open)
		return -EBADFD;
	s->open = false;
	if (!first && s->now == s->t_prev) {
		/* zero-length period: keep the baselines, so its bytes count
		 * in the next period, and divide by nothing */
		s->skipped++;
		return 0;
	}
	dt = first ? 0 : s->now - s->t_prev;
	alpha = first ? 0 : 1 - exp(-(double)dt / s->c.smooth_ns);

	agg = apply_jobs(s, dt ? dt : 1, first);
	if (!first) {
		double link = s->c.link_bps / 8.0;

		s->rate = agg * NS_PER_S / dt;
		ewma(&s->rate_avg, s->rate, alpha);
		s->saturated = link > 0 && s->rate >= link * s->c.sat_pct / 100.0;
		s->time_ns += dt;
		if (s->saturated) {
			s->sat_ns += dt;
			s->sat_bytes += agg;
		}
		apply_jobs_activity(s, dt, alpha);
	}
	hist_push(s, s->saturated);
	/* A sample without flows (the sampler reads them less often than the
	 * job counters): nothing to do for them, membership included; they
	 * count from their own last reading when they come. */
	if (!s->flows_read && !first)
		goto done;

	/* Pass 1: each flow's period; who is a member of its job's group;
	 * forget the flows idle too long. Downwards, so that a deletion moves
	 * an entry already visited into the hole. */
	memset(s->members, 0, sizeof(s->members));
	memset(s->job_iter, 0, sizeof(s->job_iter));
	for (unsigned int k = s->nflows; k-- > 0;) {
		struct flow_st *f = &s->flow[k];
		uint64_t since = f->last_active_ns ? f->last_active_ns : f->added_ns;

		flow_period(s, f, first);
		if (!f->delta && s->now - since >= s->c.flow_idle_ns) {
			flow_delete(s, k);
			s->flows_expired++;
			continue;
		}
		/* the job's iteration: its slowest worker's */
		if (f->iter_ns > s->job_iter[f->job])
			s->job_iter[f->job] = f->iter_ns;
	}
	count_members(s);
	settle_begin(s);

	/* Pass 2: accumulate every active flow period under its job's n. */
	for (unsigned int k = 0; k < s->nflows; k++) {
		struct flow_st *f = &s->flow[k];
		struct job_st *j = &s->job[f->job];
		unsigned int n = s->members[f->job];
		uint64_t sat_adt;
		bool known, pure;

		if (!first) {
			/* over its own interval: a flow reported in this sample
			 * since its last reading; one missing, 0 since */
			f->rate = f->delta ? f->delta * NS_PER_S / f->span : 0;
			ewma(&f->rate_avg, f->rate,
			     1 - exp(-(double)(s->now - f->rate_t) / s->c.smooth_ns));
			f->rate_t = s->now;
		}
		if (!f->delta)
			continue;
		/* read every sample: the period's verdict; else the verdicts of
		 * the samples its active time spans */
		sat_adt = sat_overlap(s, f, &known);
		pure = known && sat_adt == 0 && !f->placed;
		acc_add(&f->acc, f->delta, f->adt, sat_adt, pure, n);
		acc_add(&j->flows, f->delta, f->adt, sat_adt, pure, n);
		acc_add(&s->global, f->delta, f->adt, sat_adt, pure, n);
		{
			/* counting hosts: its share of its host's time (stats.h) */
			double sh = s->c.n_flows ? 1.0 : f->host_share;

			settle_add(s, j, f->job, n, f->delta, llround(f->adt * sh),
				   llround(sat_adt * sh), pure);
		}
	}
	settle_end(s);
	/* each job's n; the jobs at rest leave the live ones */
	for (unsigned int l = s->nlive; l-- > 0;) {
		uint32_t i = s->live[l];

		s->job[i].n = s->members[i];
		if (job_at_rest(s, i)) {
			s->job[i].live = false;
			s->live[l] = s->live[--s->nlive];
		}
	}
	req_update(s);
	s->flow_gen++;
done:
	if (!first)
		s->samples++;
	s->t_prev = s->now;
	s->have_prev = true;
	return 0;
}

/* ---- estimators ---- */

double tls_spotdnn_p(double a, double b, double n)
{
	if (!(n >= 0))
		return nan_v;
	return fmin(a * sqrt(n) - b, 1.0);
}

double tls_spotdnn_b_wk(double p, double b_ps, double n, double b_req)
{
	if (!(n > 0) || isnan(b_ps) || isnan(b_req))
		return nan_v;
	if (b_req > b_ps / n)
		return p * b_ps / n + (1 - p) * b_req;
	return b_req;
}

double tls_spotdnn_p_solve(double b_wk, double b_ps, double n, double b_req)
{
	double share;

	if (!(n > 0) || isnan(b_wk) || isnan(b_ps) || isnan(b_req))
		return nan_v;
	share = b_ps / n;
	if (!(b_req > share))
		return nan_v; /* B_wk = B_req: P plays no role */
	return (b_req - b_wk) / (b_req - share);
}

static double b_ps_of(const struct tls_stats *s, bool *measured)
{
	*measured = false;
	if (s->sat_ns && s->sat_ns >= s->c.min_obs_ns) {
		*measured = true;
		return s->sat_bytes * NS_PER_S / s->sat_ns;
	}
	if (s->c.link_bps)
		return s->c.link_bps / 8.0;
	return nan_v;
}

/* Less uncontended time than this and B_req falls back to a wider set (job,
 * then all flows): a quarter of the observation minimum. */
static uint64_t min_req_ns(const struct tls_stats *s)
{
	return s->c.min_obs_ns / 4;
}

static double own_b_req(const struct tls_stats_acc *a, uint64_t *unsat_ns)
{
	*unsat_ns = a->unsat_ns;
	return *unsat_ns ? a->unsat_bytes * NS_PER_S / *unsat_ns : nan_v;
}

/* The estimators of a with the given B_req. */
static void estimate_with(const struct tls_stats *s, const struct tls_stats_acc *a, double b_req,
			  struct tls_stats_est *e)
{
	bool measured;

	e->b_wk = a->active_ns ? a->bytes * NS_PER_S / a->active_ns : nan_v;
	e->b_req = b_req;
	e->p_direct = a->active_ns ? (double)a->sat_active_ns / a->active_ns : nan_v;
	e->n_mean = a->active_ns ? a->n_ns / a->active_ns : nan_v;
	e->p_solved = tls_spotdnn_p_solve(e->b_wk, b_ps_of(s, &measured), e->n_mean, e->b_req);
}

/* With its own B_req if it has enough uncontended time, else fallback_req. */
static void estimate(const struct tls_stats *s, const struct tls_stats_acc *a, double fallback_req,
		     struct tls_stats_est *e)
{
	uint64_t unsat_ns;
	double own = own_b_req(a, &unsat_ns);

	estimate_with(s, a, unsat_ns >= min_req_ns(s) || isnan(fallback_req) ? own : fallback_req,
		      e);
}

/* The job's observation at the smallest n usable for B_req, or NULL: kept
 * by req_update, checked here all the same. */
static const struct obs_st *job_req_obs(const struct tls_stats *s, uint32_t job)
{
	uint32_t i = s->job[job].req_obs;

	if (i >= s->nobs || !req_usable(s, &s->obs[i]) || s->obs[i].job != job)
		return NULL;
	return &s->obs[i];
}

/*
 * The host's B_req: by the jobs' rule (job_b_req below), pooled: each
 * job's observation at its smallest n unsaturated for min_obs_ns, bytes
 * over time, the jobs forgotten since the reset included (as they were
 * when forgotten: tls_stats_forget_job). Every flow's unsaturated time,
 * the contended large-n periods included, only when no job has such an
 * observation: in a CI run those periods, with retransmissions, pulled it
 * 5% under the uncontended workers' own rate while the job's was within
 * 0.5% of it.
 */
static double global_b_req(const struct tls_stats *s)
{
	uint64_t unsat_ns;

	if (s->req_ns + s->ret_ns > 0)
		return (s->req_bytes + s->ret_bytes) * NS_PER_S / (s->req_ns + s->ret_ns);
	return own_b_req(&s->global, &unsat_ns);
}

/*
 * A job's B_req, the workers' demand: their rate while the link was not
 * saturated, at the smallest n that was unsaturated for min_obs_ns. At a
 * larger n an unsaturated period is still contended for part of it (the
 * verdict is the period's, and TCP's queues drain slower than the link's
 * aggregate drops below the threshold): measured, 8 workers of an
 * asynchronous job pulled at 1.6 MB/s in such periods, a third of their
 * uncontended 4.8 MB/s, and pulled the job's B_req over all of them 8%
 * low. Without such an observation: all its flows' unsaturated time, as
 * before, then the host's (global_b_req).
 */
static double job_b_req(const struct tls_stats *s, uint32_t job)
{
	const struct obs_st *best = job_req_obs(s, job);
	struct tls_stats_est e;

	if (best)
		return best->acc.unsat_bytes * NS_PER_S / best->acc.unsat_ns;
	estimate(s, &s->job[job].flows, global_b_req(s), &e);
	return e.b_req;
}

/* ---- queries ---- */

void tls_stats_link(const struct tls_stats *s, struct tls_stats_link_info *out)
{
	memset(out, 0, sizeof(*out));
	out->link_rate = s->c.link_bps / 8.0;
	out->b_ps = b_ps_of(s, &out->b_ps_measured);
	out->sat_rate = s->sat_ns ? s->sat_bytes * NS_PER_S / s->sat_ns : nan_v;
	out->rate = s->rate;
	out->rate_avg = s->rate_avg;
	out->saturated = s->saturated;
	out->time_ns = s->time_ns;
	out->sat_ns = s->sat_ns;
	out->last_ns = s->have_prev ? s->t_prev : 0;
	out->samples = s->samples;
	out->skipped = s->skipped;
	out->rejected = s->rejected;
	out->resets = s->resets;
	out->flows = s->nflows;
	out->max_flows = s->c.max_flows;
	out->flows_expired = s->flows_expired;
	out->flows_evicted = s->flows_evicted;
	out->flows_dropped = s->flows_dropped;
	out->obs = s->nobs;
	out->max_obs = s->c.max_obs;
	out->obs_evicted = s->obs_evicted;
}

int tls_stats_job_flows(const struct tls_stats *s, uint32_t job, unsigned int *n)
{
	if (job >= TLS_MAX_JOBS || !s->job[job].known)
		return -ENOENT;
	*n = s->job[job].nflows;
	return 0;
}

int tls_stats_job(const struct tls_stats *s, uint32_t job, struct tls_stats_job_info *out)
{
	const struct job_st *j;

	if (job >= TLS_MAX_JOBS || !s->job[job].known)
		return -ENOENT;
	j = &s->job[job];
	memset(out, 0, sizeof(*out));
	out->job = job;
	out->n = j->n;
	out->nflows = j->nflows;
	out->bytes = j->bytes;
	out->rate = j->rate;
	out->rate_avg = j->rate_avg;
	out->active_ns = j->active_ns;
	out->sat_active_ns = j->sat_active_ns;
	out->grew_ns = j->grew_ns;
	out->flows = j->flows;
	estimate_with(s, &j->flows, job_b_req(s, job), &out->est);
	out->n_hosts = j->n_hosts;
	out->n_flows = j->n_flows;
	out->iter_ns = j->iter_ns;
	out->window_ns = j->window_ns;
	out->n_settled = j->settled;
	out->transitional = j->transit;
	return 0;
}

uint64_t tls_stats_flow_gen(const struct tls_stats *s)
{
	return s->flow_gen;
}

size_t tls_stats_jobs(const struct tls_stats *s, struct tls_stats_job_info *out, size_t max)
{
	size_t cnt = 0;

	for (uint32_t j = 0; j < TLS_MAX_JOBS; j++) {
		if (!s->job[j].known)
			continue;
		if (cnt < max)
			tls_stats_job(s, j, &out[cnt]);
		cnt++;
	}
	return cnt;
}

static int flow_cmp(const struct flow_st *a, const struct flow_st *b)
{
	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	return memcmp(&a->key, &b->key, sizeof(a->key));
}

static int flow_idx_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct tls_stats *s = ctx;

	return flow_cmp(&s->flow[*(const uint32_t *)pa], &s->flow[*(const uint32_t *)pb]);
}

static void flow_info_with(const struct tls_stats *s, const struct flow_st *f, double b_req,
			   struct tls_stats_flow_info *out)
{
	memset(out, 0, sizeof(*out));
	out->key = f->key;
	out->job = f->job;
	out->n = s->job[f->job].n;
	out->first_ns = f->cur_first;
	out->last_active_ns = f->last_active_ns;
	out->rate = f->rate;
	out->rate_avg = f->rate_avg;
	out->acc = f->acc;
	estimate(s, &f->acc, b_req, &out->est);
}

static void flow_info(const struct tls_stats *s, const struct flow_st *f,
		      struct tls_stats_flow_info *out)
{
	flow_info_with(s, f, job_b_req(s, f->job), out);
}

size_t tls_stats_flows(const struct tls_stats *s, uint32_t job, struct tls_stats_flow_info *out,
		       size_t max)
{
	uint32_t *idx = malloc((s->nflows ? s->nflows : 1) * sizeof(*idx));
	size_t cnt = 0;

	for (uint32_t k = 0; k < s->nflows; k++) {
		if (job != TLS_STATS_ALL_JOBS && s->flow[k].job != job)
			continue;
		if (idx)
			idx[cnt] = k;
		else if (cnt < max) /* no memory to sort: table order */
			flow_info(s, &s->flow[k], &out[cnt]);
		cnt++;
	}
	if (idx) {
		uint32_t job_of = TLS_MAX_JOBS;
		double b_req = 0;

		qsort_r(idx, cnt, sizeof(*idx), flow_idx_cmp, (void *)s);
		for (size_t i = 0; i < cnt && i < max; i++) {
			const struct flow_st *f = &s->flow[idx[i]];

			/* sorted by job: its B_req (a scan of the
			 * observations) once per job, not per flow */
			if (f->job != job_of) {
				job_of = f->job;
				b_req = job_b_req(s, job_of);
			}
			flow_info_with(s, f, b_req, &out[i]);
		}
		free(idx);
	}
	return cnt;
}

struct tls_stats_flow_info *tls_stats_flows_all(const struct tls_stats *s, uint32_t job, size_t *n)
{
	/* s->nflows bounds any job's; nothing runs between the two */
	struct tls_stats_flow_info *out = malloc((s->nflows ? s->nflows : 1) * sizeof(*out));

	*n = out ? tls_stats_flows(s, job, out, s->nflows) : 0;
	return out;
}

const char *tls_obs_use_str(enum tls_obs_use u)
{
	switch (u) {
	case TLS_OBS_USED:
		return "used";
	case TLS_OBS_LITTLE_DATA:
		return "too little active time";
	case TLS_OBS_NO_BREQ:
		return "no uncontended rate (B_req) measured";
	case TLS_OBS_NO_BPS:
		return "no PS bandwidth (B_ps): link rate unknown and never saturated";
	case TLS_OBS_UNCONTENDED:
		return "uncontended regime (B_req <= B_ps/n): P plays no role";
	case TLS_OBS_NO_P:
		return "P undefined";
	case TLS_OBS_OTHER_JOB:
		return "another job";
	}
	return "?";
}

static double obs_p(const struct tls_stats_obs *o, enum tls_fit_source src)
{
	return src == TLS_FIT_DIRECT ? o->est.p_direct : o->est.p_solved;
}

static void obs_info(const struct tls_stats *s, const struct obs_st *o, uint32_t job,
		     enum tls_fit_source src, struct tls_stats_obs *out)
{
	bool measured;
	double b_ps = b_ps_of(s, &measured), req;

	memset(out, 0, sizeof(*out));
	out->job = o->job;
	out->n = o->n;
	out->retired = o->retired;
	out->first_ns = o->first_ns;
	out->last_ns = o->last_ns;
	out->acc = o->acc;
	/*
	 * B_req is the workers' demand, whatever n: their job's, from all its
	 * flows' uncontended time, not the observation's own. That is little
	 * at a large n, where the link is rarely unsaturated, and the worst of
	 * it: unsaturated periods there are mostly contended for part of the
	 * period (the verdict is the period's), and P solved is a ratio of
	 * differences with B_req in both. A retired observation's job id may
	 * belong to another job now: its own job's, kept when it was retired.
	 */
	req = o->retired ? o->ret_req : job_b_req(s, o->job);
	if (isnan(req)) /* none known: its own, if any */
		estimate(s, &o->acc, req, &out->est);
	else
		estimate_with(s, &o->acc, req, &out->est);
	/* its n is exact: n_mean of an observation is n */
	if (job != TLS_STATS_ALL_JOBS && (o->job != job || o->retired))
		out->use = TLS_OBS_OTHER_JOB;
	else if (o->acc.active_ns < s->c.min_obs_ns)
		out->use = TLS_OBS_LITTLE_DATA;
	else if (isnan(out->est.b_req))
		out->use = TLS_OBS_NO_BREQ;
	else if (isnan(b_ps))
		out->use = TLS_OBS_NO_BPS;
	else if (!(out->est.b_req > b_ps / o->n * (1 + REGIME_MARGIN)))
		out->use = TLS_OBS_UNCONTENDED;
	else if (!isfinite(obs_p(out, src)))
		out->use = TLS_OBS_NO_P;
	else
		out->use = TLS_OBS_USED;
}

static int obs_cmp(const void *pa, const void *pb)
{
	const struct tls_stats_obs *a = pa, *b = pb;

	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	if (a->retired != b->retired)
		return a->retired ? -1 : 1;
	return a->first_ns < b->first_ns ? -1 : a->first_ns > b->first_ns;
}

size_t tls_stats_observations(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
			      struct tls_stats_obs *out, size_t max)
{
	size_t cnt = 0;

	for (unsigned int i = 0; i < s->nobs; i++) {
		if (!s->obs[i].used)
			continue;
		if (cnt < max)
			obs_info(s, &s->obs[i], job, src, &out[cnt]);
		cnt++;
	}
	if (out && max)
		qsort(out, cnt < max ? cnt : max, sizeof(*out), obs_cmp);
	return cnt;
}

int tls_stats_fit(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
		  struct tls_stats_fit *out)
{
	double *n, *y, *w;
	unsigned int cnt = 0;
	int err;

	memset(out, 0, sizeof(*out));
	n = malloc((s->nobs + 1) * sizeof(*n));
	y = malloc((s->nobs + 1) * sizeof(*y));
	w = malloc((s->nobs + 1) * sizeof(*w));
	err = n && y && w ? 0 : -ENOMEM;
	for (unsigned int i = 0; !err && i < s->nobs; i++) {
		struct tls_stats_obs o;

		if (!s->obs[i].used)
			continue;
		obs_info(s, &s->obs[i], job, src, &o);
		if (o.use != TLS_OBS_USED)
			continue;
		n[cnt] = o.n;
		y[cnt] = obs_p(&o, src);
		/* weight by active time: a long observation is a precise one */
		w[cnt] = o.acc.active_ns / NS_PER_S;
		cnt++;
	}
	if (!err)
		err = tls_fit_p_sqrt(n, y, w, cnt, out);
	free(n);
	free(y);
	free(w);
	return err;
}

void tls_stats_calibrate(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
			 struct tls_stats_calib *out)
{
	memset(out, 0, sizeof(*out));
	tls_stats_link(s, &out->link);
	out->job = job;
	out->source = src;
	if (job == TLS_STATS_ALL_JOBS)
		out->b_req = global_b_req(s);
	else if (job < TLS_MAX_JOBS)
		out->b_req = job_b_req(s, job);
	else
		out->b_req = nan_v;
	out->fit_err = tls_stats_fit(s, job, src, &out->fit);
}

void tls_stats_forget_job(struct tls_stats *s, uint32_t job)
{
	const struct obs_st *best;
	struct job_st *j;
	double req;
	bool live;

	if (job >= TLS_MAX_JOBS)
		return;
	s->flow_gen++;
	/* its B_req, for its observations and the host's pool, as it is now */
	best = job_req_obs(s, job);
	req = job_b_req(s, job);
	if (best) {
		s->ret_bytes += best->acc.unsat_bytes;
		s->ret_ns += best->acc.unsat_ns;
	}
	for (unsigned int k = s->nflows; k-- > 0;)
		if (s->flow[k].job == job)
			flow_delete(s, k);
	for (unsigned int i = 0; i < s->nobs; i++)
		if (s->obs[i].used && !s->obs[i].retired && s->obs[i].job == job) {
			s->obs[i].retired = true;
			s->obs[i].ret_req = req;
		}
	j = &s->job[job];
	live = j->live; /* still in s->live: leaves it once at rest again */
	memset(j, 0, sizeof(*j));
	j->live = live;
	j->obs = j->pend_obs = j->req_obs = OBS_NONE;
	req_update(s);
}

/* ---- the fit ---- */

struct pt {
	double x, y, w;
};

static int pt_cmp(const void *pa, const void *pb)
{
	const struct pt *a = pa, *b = pb;

	return a->x < b->x ? -1 : a->x > b->x;
}

static double objective(const struct pt *p, size_t cnt, double a, double b)
{
	double f = 0;

	for (size_t i = 0; i < cnt; i++) {
		double r = fmin(a * p[i].x - b, 1.0) - p[i].y;

		f += p[i].w * r * r;
	}
	return f;
}

/*
 * P(n) = min(a*x - b, 1) with x = sqrt(n) is a line capped at 1. For a > 0
 * the capped points are those with the largest x, so the optimum is a line
 * fitted to a prefix of the points sorted by x, the rest capped. Every prefix
 * with two distinct x is a candidate (weighted least squares on the prefix);
 * the candidate with the least total squared error of the capped model over
 * all points wins. Exact when the data follow the model; m distinct x cost
 * O(m * cnt).
 */
int tls_fit_p_sqrt(const double *n, const double *y, const double *w, size_t cnt,
		   struct tls_stats_fit *out)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, best = INFINITY, wsum = 0;
	unsigned int below = 0; /* distinct x among points with y < 1 */
	double last_below = NAN, last_x = NAN;
	struct pt *p;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!cnt)
		return -ENODATA;
	p = malloc(cnt * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (i = 0; i < cnt; i++) {
		p[i].x = sqrt(n[i]);
		p[i].y = y[i];
		p[i].w = w ? w[i] : 1.0;
		if (!(p[i].w > 0) || !isfinite(p[i].y) || !(n[i] >= 1)) {
			free(p);
			return -EINVAL;
		}
		wsum += p[i].w;
	}
	qsort(p, cnt, sizeof(*p), pt_cmp);
	out->nobs = cnt;
	out->n_min = lround(p[0].x * p[0].x);
	out->n_max = lround(p[cnt - 1].x * p[cnt - 1].x);
	for (i = 0; i < cnt; i++) {
		if (p[i].x != last_x)
			out->ndistinct++;
		last_x = p[i].x;
		if (p[i].y < 1 && p[i].x != last_below) {
			below++;
			last_below = p[i].x;
		}
	}
	/* The points at P = 1 only bound the line from below: two distinct n
	 * under the cap are needed to pin a and b down. */
	if (below < 2) {
		free(p);
		return -EDOM;
	}
	for (i = 0; i < cnt; i++) {
		double det, a, b, f;

		sw += p[i].w;
		sx += p[i].w * p[i].x;
		sy += p[i].w * p[i].y;
		sxx += p[i].w * p[i].x * p[i].x;
		sxy += p[i].w * p[i].x * p[i].y;
		/* a candidate ends where x changes (ties stay together) */
		if (i + 1 < cnt && p[i + 1].x == p[i].x)
			continue;
		det = sw * sxx - sx * sx;
		if (!(det > 1e-12 * sw * sxx))
			continue; /* one distinct x so far */
		a = (sw * sxy - sx * sy) / det;
		b = -(sy - a * sx) / sw;
		f = objective(p, cnt, a, b);
		if (f < best) {
			best = f;
			out->a = a;
			out->b = b;
		}
	}
	free(p);
	out->rms = sqrt(best / wsum);
	return 0;
}
