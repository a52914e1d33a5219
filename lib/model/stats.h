/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The statistics engine: what the classifier's counters say about contention,
 * in the terms of spotDNN's bandwidth model (docs/design.md, "Statistics and
 * the spotDNN model"):
 *
 *     B_wk = P * B_ps / n + (1 - P) * B_req    if B_req > B_ps / n
 *     B_wk = B_req                             otherwise
 *     P(n) = min(a * sqrt(n) - b, 1)
 *
 * Pure: no I/O, no BPF, no clock. The caller (tcd/stats_sampler.c in tlsd,
 * synthetic streams in the unit tests) feeds one sample per period:
 *
 *     tls_stats_begin(s, now_ns);
 *     tls_stats_add_job(s, job, cumulative_bytes);      for job 0 and each job
 *     tls_stats_add_flow(s, &key, &flow);               for each worker flow
 *     tls_stats_end(s);
 *
 * Counters are cumulative (as the BPF maps keep them); the engine takes the
 * differences. A counter that goes down was reset (a job id reused, a flow's
 * socket replaced): its new value counts as the bytes since the reset.
 *
 * Definitions (each is argued where it is computed, in stats.c):
 * - Aggregate egress: the sum of the job counters of a sample, job 0 (the
 *   default class) included. The link is saturated in a period when the
 *   aggregate rate is at least sat_pct % of the configured link rate.
 * - A flow is active in a period when its byte counter grew; its active time
 *   is the period, cut to its first and last packet stamps when they fall
 *   inside (a burst shorter than a period is not stretched to it); a flow
 *   that resumed after a pause inside the period is placed by its packets
 *   in the period at the spacing it had while sending before.
 * - n of a job: its workers active together, i.e. those active within the
 *   job's window (stats_group.h: twice its iteration, at least group_ns, or
 *   window_ns): worker hosts (remote addresses), as spotDNN counts
 *   instances, or with n_flows worker flows. A flow's active period counts
 *   in the observation (job, n) of its job's n at that period; counting
 *   hosts, with its share of its host's bytes of the period as its share
 *   of the host's active time, so that an observation's B_wk is a host's
 *   (a g-GPU instance's g flows together), as spotDNN's B_wk is an
 *   instance's.
 * - A job's n is observed once it settled, i.e. held for the job's window
 *   (the time n is counted over); until then its periods are in the
 *   observation (job, n) provisionally. An n that changed before it held
 *   that long was passing (workers joining one after another: at a job's
 *   start the pushes begin as the first pulls end, all together): its
 *   periods are taken out of the observation again (which goes if they
 *   made it) and are the job's transitional time.
 * - B_wk: bytes over active time. B_req: bytes over active time while the
 *   link was not saturated, in the periods whose start is known (not
 *   placed). P direct: saturated active time over active time.
 *   The link's verdict is per sample; a flow may be read less often (the
 *   sampler reads flows every 100 ms even at a 10 ms period): its interval
 *   between two readings is then split into saturated and unsaturated time
 *   by the verdicts of the samples it spans, and counts towards B_req only
 *   if it never saw the link saturated.
 *   P solved: P from the formula with the measured B_wk, B_ps and B_req
 *   (an observation's with its job's B_req: the workers' demand whatever n,
 *   measured at the smallest n unsaturated for min_obs_ns, else over all
 *   the job's flows). P is a fraction of the time: a and b have no unit.
 * - B_ps: the aggregate rate while saturated once the link has been
 *   saturated for min_obs_ns, before that the configured link rate.
 *
 * Rates are bytes per second (spotDNN's MB/s are 10^6 bytes per second),
 * times are nanoseconds of the caller's clock (CLOCK_MONOTONIC in tlsd).
 * Memory is fixed at creation: max_flows flows, max_obs observations and one
 * slot per job id; what does not fit evicts the longest idle entry.
 */
#ifndef TLS_STATS_H
#define TLS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls_common.h"

#define TLS_STATS_ALL_JOBS UINT32_MAX

#define TLS_STATS_PERIOD_MIN_NS	    (10ULL * 1000 * 1000)  /* 10 ms */
#define TLS_STATS_PERIOD_DEFAULT_NS (100ULL * 1000 * 1000) /* 100 ms */

struct tls_stats_conf {
	uint64_t link_bps;	 /* configured link rate, bits/s; 0: unknown, never saturated */
	unsigned int sat_pct;	 /* saturated at >= this % of link_bps (1..100); 90 */
	uint64_t smooth_ns;	 /* time constant of the smoothed rates; 1 s */
	uint64_t group_ns;	 /* workers active within this window count together in n;
				  * with window_ns 0 the smallest window; 1 s */
	uint64_t window_ns;	 /* the window, fixed; 0: twice the job's iteration, measured
				  * from its bursts, at least group_ns (stats_group.h); 0 */
	bool n_flows;		 /* n counts worker flows, not worker hosts (addresses); false */
	uint64_t flow_idle_ns;	 /* a flow idle this long is forgotten; 60 s */
	uint64_t clock_slack_ns; /* granularity of the flows' packet stamps (the coarse
				  * clock's tick); 4 ms */
	uint64_t min_obs_ns;	 /* an observation (and measured B_ps) needs this much
				  * active time to count; 1 s */
	unsigned int max_flows;	 /* flows tracked at once; 4096 */
	unsigned int max_obs;	 /* (job, n) observations kept; 256 */
};

void tls_stats_conf_defaults(struct tls_stats_conf *c);
/* 0, or -EINVAL with a message naming the bad setting. */
int tls_stats_conf_check(const struct tls_stats_conf *c, char *err, size_t errlen);

struct tls_stats;

/* -EINVAL (bad configuration, see tls_stats_conf_check) or -ENOMEM. */
int tls_stats_new(const struct tls_stats_conf *c, struct tls_stats **out);
void tls_stats_free(struct tls_stats *s);
/* The configuration in use. */
const struct tls_stats_conf *tls_stats_get_conf(const struct tls_stats *s);
/* The link rate changed (configuration reload); bits/s. */
void tls_stats_set_link_rate(struct tls_stats *s, uint64_t bps);

/*
 * Feeding. begin() opens a sample at now_ns: -ERANGE if now_ns is before the
 * previous sample (the sample is refused, the state kept). add_*() return
 * -EINVAL for a job id out of range (or job 0 for a flow) and -EBADFD outside
 * a sample. A job or flow given twice in one sample keeps the newer record
 * (later first packet, then more bytes). end() applies the sample; a sample
 * at the same time as the previous one is a zero-length period: it is
 * skipped, and its bytes count in the next one.
 */
int tls_stats_begin(struct tls_stats *s, uint64_t now_ns);
int tls_stats_add_job(struct tls_stats *s, uint32_t job, uint64_t bytes);
int tls_stats_add_flow(struct tls_stats *s, const struct tls_flow_key *key,
		       const struct tls_flow *flow);
/* The same for a record whose source was not read in every sample: since_ns
 * is when that source was read before. A flow seen for the first time then
 * counts all its bytes if its first packet came after since_ns (a flow
 * already tracked counts from its own last reading anyway). */
int tls_stats_add_flow_since(struct tls_stats *s, const struct tls_flow_key *key,
			     const struct tls_flow *flow, uint64_t since_ns);
/* The same for a record the caller reads at a fixed place (a slot of the
 * classifier's arrays): *hint, the caller's own for that place, 0 at
 * first, is kept by the engine (where it holds the flow); while it still
 * holds there, the flow is found without a probe of the hash index (a
 * cache miss and a hash of the key for each flow of each reading). A
 * flow the engine does not track leaves 0 there if it never will (history:
 * its last packet older than flow_idle_ns) and TLS_STATS_HINT_RETRY if it
 * could not now (the table full of flows fed in this sample): a caller
 * that skips idle slots offers such a one again at its next reading. */
#define TLS_STATS_HINT_RETRY UINT32_MAX
int tls_stats_add_flow_hint(struct tls_stats *s, const struct tls_flow_key *key,
			    const struct tls_flow *r, uint64_t since_ns, uint32_t *hint);
/* A flow the caller did not read in this sample, knowing it unchanged
 * since it last read it (an idle flow's slot: lib/bpf/slot_ways.h): fed
 * with the counters it was last fed, as if read again. hint: the caller's
 * for the flow's place, as given to tls_stats_add_flow_hint() (compared,
 * never read through: it may be freed with the engine still there).
 * false, and nothing done, unless the flow there was last fed through
 * this very hint and has not moved since: the caller reads the record
 * then (tls_stats_add_flow_hint() puts the hint right), or a flow that is
 * not fed keeps its period's base, and the period after spans the gap. */
bool tls_stats_flow_unchanged(struct tls_stats *s, const uint32_t *hint);
/* This sample carries a reading of all flows, however many (adding a flow
 * says so too). Flows are processed (idle ones forgotten, n updated) only in
 * such samples: between two readings they wait, and then count from their
 * last reading. */
void tls_stats_flows_read(struct tls_stats *s);
int tls_stats_end(struct tls_stats *s);

/* What every level (flow, job, observation) accumulates. */
struct tls_stats_acc {
	uint64_t bytes;
	uint64_t active_ns;	/* time it sent in */
	uint64_t sat_active_ns; /* of which the link was saturated */
	/* B_req's share: bytes and active time of the intervals (between two
	 * readings of the flow) in which the link was never saturated */
	uint64_t unsat_bytes;
	uint64_t unsat_ns;
	double n_ns; /* sum of n * active time: the mean n */
};

/* The estimators; NaN where there is no data (or, for p_solved, where the
 * formula does not involve P: B_req <= B_ps / n). */
struct tls_stats_est {
	double b_wk;	 /* bytes / active time, B/s */
	double b_req;	 /* bytes / active time while the link was not saturated */
	double p_direct; /* saturated active time / active time */
	double p_solved; /* P from the formula */
	double n_mean;	 /* n, active-time weighted */
};

struct tls_stats_job_info {
	uint32_t job;
	unsigned int n;	     /* its worker flows active together now */
	unsigned int nflows; /* its flows tracked now */
	uint64_t bytes;	     /* the job counter (HTB bytes, all its traffic) */
	double rate;	     /* B/s in the last period */
	double rate_avg;     /* smoothed, B/s */
	uint64_t active_ns;  /* periods the job counter grew */
	uint64_t grew_ns;    /* the last sample it grew in (its clock); 0 never */
	uint64_t sat_active_ns;
	struct tls_stats_acc flows; /* its worker flows together, evicted ones included */
	struct tls_stats_est est;   /* per worker, from flows */
	/* n both ways (n is one of them, by conf n_flows), and the window */
	unsigned int n_hosts, n_flows;
	uint64_t iter_ns;   /* its iteration, from its flows' bursts; 0: not known */
	uint64_t window_ns; /* workers active within this count in n */
	/* n has held for window_ns: its periods are observed. n is counted
	 * in the samples that read flows, so a job first seen by its counter
	 * settles up to one flow period later than its window. */
	bool n_settled;
	/* its flows' periods at an n that changed before it settled: in no
	 * observation (host shares as in an observation's) */
	struct tls_stats_acc transitional;
};

struct tls_stats_flow_info {
	struct tls_flow_key key;
	uint32_t job;
	unsigned int n;		 /* its job's n now */
	uint64_t first_ns;	 /* its first packet */
	uint64_t last_active_ns; /* the last sample it was active in; 0: never */
	double rate;		 /* B/s in the last period */
	double rate_avg;
	struct tls_stats_acc acc;
	struct tls_stats_est est;
};

/* Why an observation is or is not in the fit. */
enum tls_obs_use {
	TLS_OBS_USED = 0,
	TLS_OBS_LITTLE_DATA, /* active time below min_obs_ns */
	TLS_OBS_NO_BREQ,     /* no uncontended rate known for it */
	TLS_OBS_NO_BPS,	     /* no link rate configured and never saturated */
	TLS_OBS_UNCONTENDED, /* B_req <= B_ps / n (+ margin): P plays no role */
	TLS_OBS_NO_P,	     /* its P is not a number */
	TLS_OBS_OTHER_JOB,   /* not the job asked for */
};
const char *tls_obs_use_str(enum tls_obs_use u);

struct tls_stats_obs {
	uint32_t job;
	unsigned int n;
	bool retired; /* its job id was forgotten (and maybe reused since) */
	uint64_t first_ns, last_ns;
	struct tls_stats_acc acc;
	struct tls_stats_est est;
	enum tls_obs_use use;
};

/* Which P the fit uses: P solved (default: the a, b that reproduce the
 * measured B_wk through spotDNN's formula) or P direct. */
enum tls_fit_source {
	TLS_FIT_SOLVED = 0,
	TLS_FIT_DIRECT,
};

struct tls_stats_fit {
	double a, b;
	double rms;		/* active-time weighted RMS residual of P */
	unsigned int nobs;	/* observations in the fit */
	unsigned int ndistinct; /* distinct n among them */
	unsigned int n_min, n_max;
};

struct tls_stats_link_info {
	double link_rate;   /* configured, B/s (0: unknown) */
	double b_ps;	    /* the B_ps the estimators use, B/s; NaN: unknown */
	bool b_ps_measured; /* b_ps is the aggregate while saturated */
	double sat_rate;    /* aggregate rate while saturated, B/s; NaN: never saturated */
	double rate;	    /* aggregate in the last period, B/s */
	double rate_avg;
	bool saturated; /* in the last period */
	uint64_t time_ns, sat_ns;
	uint64_t last_ns;  /* time of the last sample applied */
	uint64_t samples;  /* applied (the first only sets baselines) */
	uint64_t skipped;  /* zero-length periods */
	uint64_t rejected; /* clock went backwards */
	uint64_t resets;   /* counters seen going down */
	unsigned int flows, max_flows;
	uint64_t flows_expired; /* idle flows forgotten */
	uint64_t flows_evicted; /* flows pushed out by a full table */
	uint64_t flows_dropped; /* new flows not tracked: table full of busy ones */
	unsigned int obs, max_obs;
	uint64_t obs_evicted;
};

/* What spotDNN needs, with the fit's status. */
struct tls_stats_calib {
	struct tls_stats_link_info link;
	double b_req; /* B/s, the workers' uncontended rate; NaN: unknown */
	int fit_err;  /* 0, or why there is no fit (see tls_stats_fit) */
	struct tls_stats_fit fit;
	enum tls_fit_source source;
	uint32_t job; /* TLS_STATS_ALL_JOBS or the one job */
};

void tls_stats_link(const struct tls_stats *s, struct tls_stats_link_info *out);
/* -ENOENT: no sample has mentioned the job since it was last forgotten. */
int tls_stats_job(const struct tls_stats *s, uint32_t job, struct tls_stats_job_info *out);
/* The job's flows tracked now (tls_stats_job_info's nflows) alone, without
 * the estimates tls_stats_job() computes: 0, or -ENOENT for a job not
 * known. */
int tls_stats_job_flows(const struct tls_stats *s, uint32_t job, unsigned int *n);
/* Fill up to max; return how many there are (ordered by job id). */
/*
 * Changes whenever the flows' figures may have (a sample that read the
 * flows, a job forgotten, a reset, a new link rate): while it stays, the
 * flows, the jobs' flow accumulators, n and the observations are as
 * they were. B_ps follows every sample, so an estimate that uses it (P
 * solved) may move between two changes: one kept across them is as of the
 * last flow reading. For a reader that caches what it built from them
 * (the metrics text).
 */
uint64_t tls_stats_flow_gen(const struct tls_stats *s);
size_t tls_stats_jobs(const struct tls_stats *s, struct tls_stats_job_info *out, size_t max);
/* Flows of one job or TLS_STATS_ALL_JOBS, ordered by job then key. */
size_t tls_stats_flows(const struct tls_stats *s, uint32_t job, struct tls_stats_flow_info *out,
		       size_t max);
/* The same, all of them, in a malloc'ed array (its length in *n); NULL only
 * when memory is short. */
struct tls_stats_flow_info *tls_stats_flows_all(const struct tls_stats *s, uint32_t job,
						size_t *n);
/* Observations (ordered by job, n), each marked with its use in the fit of
 * that job (or of all jobs) from that source. */
size_t tls_stats_observations(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
			      struct tls_stats_obs *out, size_t max);
/*
 * Least-squares fit of P(n) = min(a * sqrt(n) - b, 1) over the usable
 * observations. 0; -ENODATA: no usable observation; -EDOM: the observations
 * with P < 1 have fewer than two distinct n, so a and b are not determined
 * (out then holds nobs and ndistinct only).
 */
int tls_stats_fit(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
		  struct tls_stats_fit *out);
/* B_ps, B_req and the fit, for one job or all. */
void tls_stats_calibrate(const struct tls_stats *s, uint32_t job, enum tls_fit_source src,
			 struct tls_stats_calib *out);

/* Forget everything measured (configuration and counters of evictions too);
 * the next sample sets baselines again. */
void tls_stats_reset(struct tls_stats *s);
/* A job id was freed or is about to be reused: forget its counters and flows
 * and retire its observations (they stay for the fit, never merged with a
 * new job's). */
void tls_stats_forget_job(struct tls_stats *s, uint32_t job);

/* spotDNN's formulas, and the fit on plain arrays (exposed for tests and
 * tools). NaN where undefined. */
double tls_spotdnn_p(double a, double b, double n);
double tls_spotdnn_b_wk(double p, double b_ps, double n, double b_req);
double tls_spotdnn_p_solve(double b_wk, double b_ps, double n, double b_req);
/* Weighted least squares of y = min(a * sqrt(n) - b, 1); w may be NULL (all
 * 1). Same return values as tls_stats_fit(). */
int tls_fit_p_sqrt(const double *n, const double *y, const double *w, size_t cnt,
		   struct tls_stats_fit *out);

#endif /* TLS_STATS_H */
