// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics engine (lib/model/stats.c) and its export (lib/model/stats_export.c) on
 * synthetic sample streams with known ground truth.
 *
 * The generator plays spotDNN's model: a job with n workers, each sending
 * at B_ps/n while all n share the saturated link (C periods per iteration)
 * and at its demand B_req while the link is not saturated (U periods, the
 * workers taking turns two at a time so that the link stays below the
 * threshold). So P = C / (C + U) and B_wk = P*B_ps/n + (1-P)*B_req hold by
 * construction, with P(n) = min(a*sqrt(n) - b, 1) for chosen a and b; the
 * engine must recover B_wk, B_req, B_ps, P (directly and solved) and a, b.
 * The generator also keeps its own books (bytes and periods sent per flow),
 * the truth the noisy variant is checked against.
 *
 * Then the awkward inputs: counter resets, flows reincarnated or reported
 * twice, stale records, floods of flows (memory must stay bounded), bursts
 * shorter than a period, no samples, one sample, zero-length periods, a
 * clock going backwards, and fits that must refuse to invent a and b.
 *
 * And flows stamped packet by packet as the classifier stamps them (a coarse
 * clock out of phase with the sampler, slow flows with irregular gaps,
 * on-off bursts resuming anywhere in a period), the shapes real TCP traffic
 * showed in tests/ns/test_calibrate.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "stats.h"
#include "stats_export.h"
#include "unit.h"

#define MS  (1000ULL * 1000)
#define SEC (1000ULL * MS)

/* The link: 14.4 MB/s, so that a 100 ms period's 1.44 MB divides evenly
 * among 4, 9, 16, 25 and 36 workers. */
#define PERIOD	   (100 * MS)
#define BPS_PERIOD 1440000ULL /* bytes per period at link rate */
#define B_PS	   14.4e6     /* B/s */
#define B_REQ	   5e6	      /* a worker's demand, B/s */
#define REQ_PERIOD 500000ULL
/* Ground truth for P(n) = min(A*sqrt(n) - B, 1) */
#define TRUE_A 0.25
#define TRUE_B 0.3

#define MAX_SIM_FLOWS 256

struct sim_flow {
	struct tls_flow_key key;
	struct tls_flow f;
	/* the generator's own books */
	uint64_t sent, periods, sat_periods;
	uint64_t sent_sat;
};

struct sim {
	struct tls_stats *s;
	uint64_t t;
	uint64_t job_bytes[TLS_MAX_JOBS];
	uint32_t max_job;
	struct sim_flow flow[MAX_SIM_FLOWS];
	unsigned int nflows;
	unsigned int rng;
	unsigned int flow_every; /* flows read every this many samples (0, 1: all) */
	unsigned int steps;
	uint64_t flows_read_t; /* when they were read last */
	uint64_t bg;	       /* default-class bytes in the next step */
};

static void conf_exact(struct tls_stats_conf *c)
{
	tls_stats_conf_defaults(c);
	c->link_bps = (uint64_t)(B_PS * 8);
	c->clock_slack_ns = 0; /* the generator's stamps are exact */
	c->group_ns = 10 * SEC;
}

static void sim_start(struct sim *m, const struct tls_stats_conf *c)
{
	memset(m, 0, sizeof(*m));
	assert_int_equal(tls_stats_new(c, &m->s), 0);
	m->t = 1000 * SEC;
	m->rng = 12345;
	/* tlsd feeds every job it has from the job's start */
	m->max_job = 7;
	/* the first sample only sets baselines */
	assert_int_equal(tls_stats_begin(m->s, m->t), 0);
	for (uint32_t j = 0; j <= m->max_job; j++)
		assert_int_equal(tls_stats_add_job(m->s, j, 0), 0);
	assert_int_equal(tls_stats_end(m->s), 0);
	m->flows_read_t = m->t;
}

static void sim_stop(struct sim *m)
{
	tls_stats_free(m->s);
	m->s = NULL;
}

static void make_key(struct tls_flow_key *k, uint32_t job, unsigned int i)
{
	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	k->proto = IPPROTO_TCP;
	k->lport = htons(9000 + job);
	k->rport = htons(40000 + i);
	k->laddr[0] = 198;
	k->laddr[1] = 18;
	k->laddr[3] = 1;
	k->raddr[0] = 198;
	k->raddr[1] = 19;
	k->raddr[2] = i >> 8;
	k->raddr[3] = i & 0xff;
}

static unsigned int sim_flow(struct sim *m, uint32_t job)
{
	struct sim_flow *f = &m->flow[m->nflows];

	assert_true(m->nflows < MAX_SIM_FLOWS);
	memset(f, 0, sizeof(*f));
	make_key(&f->key, job, m->nflows);
	f->f.job = job;
	if (job > m->max_job)
		m->max_job = job;
	return m->nflows++;
}

/* One period: flow i sends sent[i] bytes (the whole period long). */
static void sim_step(struct sim *m, const uint64_t *sent, bool saturated)
{
	uint64_t t_prev = m->t;

	m->t += PERIOD;
	for (unsigned int i = 0; i < m->nflows; i++) {
		struct sim_flow *f = &m->flow[i];

		if (!sent || !sent[i])
			continue;
		if (!f->f.first_ns)
			f->f.first_ns = t_prev;
		f->f.bytes += sent[i];
		f->f.packets++;
		f->f.last_ns = m->t;
		m->job_bytes[f->f.job] += sent[i];
		f->sent += sent[i];
		f->periods++;
		if (saturated) {
			f->sat_periods++;
			f->sent_sat += sent[i];
		}
	}
	m->job_bytes[0] += m->bg;
	m->bg = 0;
	m->steps++;
	assert_int_equal(tls_stats_begin(m->s, m->t), 0);
	for (uint32_t j = 0; j <= m->max_job; j++)
		assert_int_equal(tls_stats_add_job(m->s, j, m->job_bytes[j]), 0);
	if (m->flow_every > 1 && m->steps % m->flow_every) {
		/* flows not read in this sample */
	} else {
		for (unsigned int i = 0; i < m->nflows; i++) {
			const struct sim_flow *f = &m->flow[i];

			if (!f->f.first_ns) /* the classifier lists flows that sent */
				continue;
			if (m->flow_every > 1)
				assert_int_equal(tls_stats_add_flow_since(m->s, &f->key, &f->f,
									  m->flows_read_t),
						 0);
			else
				assert_int_equal(tls_stats_add_flow(m->s, &f->key, &f->f), 0);
		}
		m->flows_read_t = m->t;
	}
	assert_int_equal(tls_stats_end(m->s), 0);
}

/* Uniform in [1 - pct%, 1 + pct%], deterministic. */
static double noise(struct sim *m, double pct)
{
	m->rng = m->rng * 1103515245u + 12345u;
	return 1 + pct / 100 * (((m->rng >> 8) & 0xffff) / 32767.5 - 1);
}

static double true_p(unsigned int n)
{
	return fmin(TRUE_A * sqrt(n) - TRUE_B, 1);
}

/*
 * A job of n workers for some iterations: C contended periods (all at
 * B_ps/n), then U periods each at B_req two workers at a time, then idle
 * (the computation phase). P = C / (C + U) must equal true_p(n).
 */
static void sim_job(struct sim *m, uint32_t job, unsigned int n, unsigned int C, unsigned int U,
		    unsigned int iterations, double noise_pct, unsigned int *first)
{
	uint64_t sent[MAX_SIM_FLOWS];
	unsigned int left[MAX_SIM_FLOWS], i, k, it, rr = 0;

	assert_true(fabs((double)C / (C + U) - true_p(n)) < 1e-12);
	*first = m->nflows;
	for (i = 0; i < n; i++)
		sim_flow(m, job);
	for (it = 0; it < iterations; it++) {
		for (k = 0; k < C; k++) {
			memset(sent, 0, sizeof(sent));
			for (i = 0; i < n; i++)
				sent[*first + i] = llround(BPS_PERIOD / n * noise(m, noise_pct));
			sim_step(m, sent, true);
		}
		for (i = 0; i < n; i++)
			left[i] = U;
		for (;;) {
			unsigned int picked = 0;

			memset(sent, 0, sizeof(sent));
			for (k = 0; k < n && picked < 2; k++) {
				i = (rr + k) % n;
				if (!left[i])
					continue;
				left[i]--;
				sent[*first + i] = llround(REQ_PERIOD * noise(m, noise_pct));
				picked++;
			}
			if (!picked)
				break;
			rr = (rr + picked) % n;
			sim_step(m, sent, false);
		}
		for (k = 0; k < 3; k++)
			sim_step(m, NULL, false);
	}
}

static void near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want))) {
		print_error("%s: got %.9g, want %.9g (within %.2g%%)\n", what, got, want,
			    rel * 100);
		fail();
	}
}

struct scenario {
	uint32_t job;
	unsigned int n, C, U;
};

/* P = 0.2, 0.45, 0.7, 0.95 and 1 (capped) */
static const struct scenario scen[] = {
	{ 1, 4, 1, 4 }, { 2, 9, 9, 11 }, { 3, 16, 7, 3 }, { 4, 25, 19, 1 }, { 5, 36, 1, 0 },
};
#define NSCEN (sizeof(scen) / sizeof(scen[0]))

static void run_scenarios(struct sim *m, unsigned int iterations, double noise_pct,
			  unsigned int *first)
{
	for (size_t i = 0; i < NSCEN; i++)
		sim_job(m, scen[i].job, scen[i].n, scen[i].C, scen[i].U, iterations, noise_pct,
			&first[i]);
}

static double model_b_wk(unsigned int n)
{
	return tls_spotdnn_b_wk(true_p(n), B_PS, n, B_REQ);
}

static void test_ground_truth(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_link_info l;
	struct tls_stats_fit fit;
	unsigned int first[NSCEN];
	struct sim m;
	char what[64];

	(void)state;
	conf_exact(&c);
	sim_start(&m, &c);
	run_scenarios(&m, 4, 0, first);

	tls_stats_link(m.s, &l);
	assert_true(l.b_ps_measured);
	near(l.b_ps, B_PS, 0.02, "B_ps");
	for (size_t i = 0; i < NSCEN; i++) {
		struct tls_stats_job_info j;
		double p = true_p(scen[i].n);

		assert_int_equal(tls_stats_job(m.s, scen[i].job, &j), 0);
		snprintf(what, sizeof(what), "n=%u B_wk", scen[i].n);
		near(j.est.b_wk, model_b_wk(scen[i].n), 0.02, what);
		snprintf(what, sizeof(what), "n=%u P direct", scen[i].n);
		near(j.est.p_direct, p, 0.02, what);
		snprintf(what, sizeof(what), "n=%u P solved", scen[i].n);
		near(j.est.p_solved, p, 0.02, what);
		snprintf(what, sizeof(what), "n=%u n", scen[i].n);
		near(j.est.n_mean, scen[i].n, 0.02, what);
		if (scen[i].U) {
			snprintf(what, sizeof(what), "n=%u B_req", scen[i].n);
			near(j.est.b_req, B_REQ, 0.02, what);
		}
		/* every worker flow on its own too */
		for (unsigned int k = 0; k < scen[i].n; k++) {
			struct tls_stats_flow_info fl[64];
			size_t nf = tls_stats_flows(m.s, scen[i].job, fl, 64);

			assert_int_equal(nf, scen[i].n);
			snprintf(what, sizeof(what), "n=%u flow %u B_wk", scen[i].n, k);
			near(fl[k].est.b_wk, model_b_wk(scen[i].n), 0.02, what);
			near(fl[k].est.p_direct, p, 0.02, "flow P direct");
		}
	}
	assert_int_equal(tls_stats_fit(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &fit), 0);
	near(fit.a, TRUE_A, 0.02, "fitted a (P solved)");
	near(fit.b, TRUE_B, 0.02, "fitted b (P solved)");
	assert_int_equal(fit.nobs, NSCEN);
	assert_int_equal(fit.n_min, 4);
	assert_int_equal(fit.n_max, 36);
	assert_true(fit.rms < 1e-6);
	assert_int_equal(tls_stats_fit(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_DIRECT, &fit), 0);
	near(fit.a, TRUE_A, 0.02, "fitted a (P direct)");
	near(fit.b, TRUE_B, 0.02, "fitted b (P direct)");
	/* one job alone has one n: no fit, and no invented numbers */
	assert_int_equal(tls_stats_fit(m.s, 2, TLS_FIT_SOLVED, &fit), -EDOM);
	assert_int_equal(fit.nobs, 1);
	sim_stop(&m);
}

/* +-3% noise on every flow's every period: the estimators must agree with
 * the generator's own books within 2%, and a, b with the model. */
static void test_ground_truth_noisy(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_fit fit;
	unsigned int first[NSCEN];
	struct sim m;
	char what[64];

	(void)state;
	conf_exact(&c);
	sim_start(&m, &c);
	run_scenarios(&m, 40, 3, first);
	for (size_t i = 0; i < NSCEN; i++) {
		uint64_t bytes = 0, periods = 0, sat = 0, ubytes = 0;
		struct tls_stats_job_info j;

		for (unsigned int k = 0; k < scen[i].n; k++) {
			const struct sim_flow *f = &m.flow[first[i] + k];

			bytes += f->sent;
			periods += f->periods;
			sat += f->sat_periods;
			ubytes += f->sent - f->sent_sat;
		}
		assert_int_equal(tls_stats_job(m.s, scen[i].job, &j), 0);
		snprintf(what, sizeof(what), "noisy n=%u B_wk", scen[i].n);
		near(j.est.b_wk, bytes * 1e9 / (periods * PERIOD), 0.02, what);
		near(j.est.b_wk, model_b_wk(scen[i].n), 0.02, what);
		snprintf(what, sizeof(what), "noisy n=%u P direct", scen[i].n);
		near(j.est.p_direct, (double)sat / periods, 0.02, what);
		if (scen[i].U) {
			snprintf(what, sizeof(what), "noisy n=%u B_req", scen[i].n);
			near(j.est.b_req, ubytes * 1e9 / ((periods - sat) * PERIOD), 0.02, what);
		}
	}
	assert_int_equal(tls_stats_fit(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &fit), 0);
	near(fit.a, TRUE_A, 0.02, "noisy fitted a");
	near(fit.b, TRUE_B, 0.02, "noisy fitted b");
	sim_stop(&m);
}

/*
 * The link's verdict every sample, the flows read every fifth (as the sampler
 * does at a 10 ms period): two workers send all along, 3 MB/s each while the
 * default class saturates the link (7 periods in 20) and 5 MB/s otherwise.
 * The saturated blocks straddle the readings: P comes from the verdicts the
 * readings span, and B_req only from readings that never saw saturation, so
 * both stay exact.
 */
static void test_flows_read_slower(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	uint64_t sent[MAX_SIM_FLOWS] = {};
	struct sim m;
	unsigned int gens = 0;
	uint64_t gen;

	(void)state;
	conf_exact(&c);
	sim_start(&m, &c);
	m.flow_every = 5;
	sim_flow(&m, 1);
	sim_flow(&m, 1);
	gen = tls_stats_flow_gen(m.s);
	for (int i = 0; i < 100; i++) {
		bool sat = i % 20 < 7;

		sent[0] = sent[1] = sat ? 300000 : REQ_PERIOD;
		m.bg = sat ? BPS_PERIOD - 600000 : 0;
		sim_step(&m, sent, sat);
		/* the flows' figures change in the samples that read them
		 * (the metrics keep their text between two such) */
		if (tls_stats_flow_gen(m.s) != gen)
			gens++;
		assert_int_equal(tls_stats_flow_gen(m.s) != gen, m.steps % 5 == 0);
		gen = tls_stats_flow_gen(m.s);
	}
	assert_int_equal(gens, 20);
	tls_stats_forget_job(m.s, 2);
	assert_true(tls_stats_flow_gen(m.s) != gen);
	assert_int_equal(tls_stats_job(m.s, 1, &j), 0);
	assert_int_equal(j.flows.active_ns, 2 * 100 * PERIOD);
	near(j.est.p_direct, 0.35, 0.02, "P direct, flows read every 5th sample");
	near(j.est.b_wk, (35 * 300000 + 65 * REQ_PERIOD) * 1e9 / (100 * PERIOD), 0.02,
	     "B_wk, flows read every 5th sample");
	near(j.est.b_req, B_REQ, 0.02, "B_req, flows read every 5th sample");
	near(j.est.n_mean, 2, 1e-9, "n");
	sim_stop(&m);
}

static void test_formulas(void **state)
{
	(void)state;
	/* spotDNN's published constants */
	near(tls_spotdnn_p(0.8, 1.92, 9), 0.48, 1e-12, "P(9)");
	assert_true(tls_spotdnn_p(0.8, 1.92, 16) == 1);
	/* contended: the formula; uncontended: B_req */
	near(tls_spotdnn_b_wk(0.5, 1200, 16, 142), 0.5 * 75 + 0.5 * 142, 1e-12, "B_wk");
	near(tls_spotdnn_b_wk(0.5, 1200, 4, 142), 142, 1e-12, "B_wk uncontended");
	near(tls_spotdnn_p_solve(0.5 * 75 + 0.5 * 142, 1200, 16, 142), 0.5, 1e-12, "P solved");
	assert_true(isnan(tls_spotdnn_p_solve(142, 1200, 4, 142))); /* P plays no role */
	assert_true(isnan(tls_spotdnn_p_solve(NAN, 1200, 16, 142)));
	assert_true(isnan(tls_spotdnn_p_solve(100, 1200, 0, 142)));
	assert_true(isnan(tls_spotdnn_b_wk(0.5, 1200, 0, 142)));
}

static void test_fit_arrays(void **state)
{
	static const double n[] = { 6, 8, 9, 12, 16, 25, 9 };
	double y[7], w[7];
	struct tls_stats_fit f;

	(void)state;
	for (int i = 0; i < 7; i++) {
		y[i] = tls_spotdnn_p(0.8, 1.92, n[i]);
		w[i] = 1 + i;
	}
	assert_int_equal(tls_fit_p_sqrt(n, y, w, 7, &f), 0);
	near(f.a, 0.8, 1e-9, "a");
	near(f.b, 1.92, 1e-9, "b");
	assert_true(f.rms < 1e-9);
	assert_int_equal(f.nobs, 7);
	assert_int_equal(f.ndistinct, 6);
	assert_int_equal(f.n_min, 6);
	assert_int_equal(f.n_max, 25);
	/* unweighted, with points from a different line nearby: a least-squares
	 * line, not an interpolation of two points */
	{
		static const double n2[] = { 4, 9, 16, 4, 9, 16 };
		static const double y2[] = { 0.2, 0.45, 0.7, 0.3, 0.55, 0.8 };

		assert_int_equal(tls_fit_p_sqrt(n2, y2, NULL, 6, &f), 0);
		near(f.a, 0.25, 1e-9, "a of the mean line");
		near(f.b, 0.25, 1e-9, "b of the mean line");
		near(f.rms, 0.05, 1e-9, "rms");
	}
}

static void test_fit_refuses(void **state)
{
	static const double one_n[] = { 9, 9, 9 }, p3[] = { 0.4, 0.5, 0.45 };
	static const double capped_n[] = { 9, 16 }, capped_p[] = { 0.48, 1 };
	static const double bad_n[] = { 0, 4 }, p2[] = { 0.1, 0.2 };
	static const double w_bad[] = { 1, 0 };
	double p_nan[] = { 0.1, NAN };
	struct tls_stats_fit f;

	(void)state;
	assert_int_equal(tls_fit_p_sqrt(NULL, NULL, NULL, 0, &f), -ENODATA);
	/* one n, however many observations: the slope is unknown */
	assert_int_equal(tls_fit_p_sqrt(one_n, p3, NULL, 3, &f), -EDOM);
	assert_int_equal(f.nobs, 3);
	assert_int_equal(f.ndistinct, 1);
	/* two n, but one at the cap: P = 1 only bounds the line */
	assert_int_equal(tls_fit_p_sqrt(capped_n, capped_p, NULL, 2, &f), -EDOM);
	assert_int_equal(tls_fit_p_sqrt(bad_n, p2, NULL, 2, &f), -EINVAL);
	assert_int_equal(tls_fit_p_sqrt(capped_n, p_nan, NULL, 2, &f), -EINVAL);
	assert_int_equal(tls_fit_p_sqrt(capped_n, p2, w_bad, 2, &f), -EINVAL);
}

static void feed(struct tls_stats *s, uint64_t t, uint32_t job, uint64_t jb,
		 const struct tls_flow_key *k, const struct tls_flow *f)
{
	assert_int_equal(tls_stats_begin(s, t), 0);
	assert_int_equal(tls_stats_add_job(s, job, jb), 0);
	if (k)
		assert_int_equal(tls_stats_add_flow(s, k, f), 0);
	assert_int_equal(tls_stats_end(s), 0);
}

static void test_no_samples(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_job_info j;
	struct tls_stats_link_info l;
	struct tls_stats_fit f;
	struct tls_stats_calib cal;
	struct tls_flow_key k;
	struct tls_flow fl = { .job = 1 };

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	assert_int_equal(tls_stats_job(s, 1, &j), -ENOENT);
	assert_int_equal(tls_stats_jobs(s, &j, 1), 0);
	assert_int_equal(tls_stats_flows(s, TLS_STATS_ALL_JOBS, NULL, 0), 0);
	assert_int_equal(tls_stats_observations(s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, NULL, 0), 0);
	assert_int_equal(tls_stats_fit(s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &f), -ENODATA);
	tls_stats_link(s, &l);
	assert_int_equal(l.samples, 0);
	assert_false(l.b_ps_measured);
	near(l.b_ps, B_PS, 1e-12, "configured B_ps");
	assert_true(isnan(l.sat_rate));
	tls_stats_calibrate(s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	assert_int_equal(cal.fit_err, -ENODATA);
	assert_true(isnan(cal.b_req));
	/* feeding outside a sample */
	make_key(&k, 1, 0);
	assert_int_equal(tls_stats_add_job(s, 1, 5), -EBADFD);
	assert_int_equal(tls_stats_add_flow(s, &k, &fl), -EBADFD);
	assert_int_equal(tls_stats_end(s), -EBADFD);
	tls_stats_free(s);
	tls_stats_free(NULL);
}

static void test_one_sample_and_zero_period(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_job_info j;
	struct tls_stats_link_info l;
	struct tls_stats_fit f;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	feed(s, 10 * SEC, 1, 123456, NULL, NULL);
	/* one sample is a baseline: known, but nothing measured yet */
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.bytes, 0);
	assert_true(j.rate == 0);
	assert_true(isnan(j.est.b_wk));
	assert_true(isnan(j.est.p_direct));
	assert_int_equal(tls_stats_fit(s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &f), -ENODATA);
	tls_stats_link(s, &l);
	assert_int_equal(l.samples, 0);

	/* a zero-length period is skipped, its bytes count in the next */
	feed(s, 10 * SEC, 1, 123456 + 1000, NULL, NULL);
	tls_stats_link(s, &l);
	assert_int_equal(l.skipped, 1);
	assert_int_equal(l.samples, 0);
	feed(s, 10 * SEC + PERIOD, 1, 123456 + 3000, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.bytes, 3000);
	near(j.rate, 30000, 1e-12, "rate over the period");

	/* time going backwards: refused, nothing changes */
	assert_int_equal(tls_stats_begin(s, 9 * SEC), -ERANGE);
	assert_int_equal(tls_stats_add_job(s, 1, 0), -EBADFD);
	assert_int_equal(tls_stats_end(s), -EBADFD);
	tls_stats_link(s, &l);
	assert_int_equal(l.rejected, 1);
	assert_int_equal(l.samples, 1);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.bytes, 3000);

	/* ids out of range */
	assert_int_equal(tls_stats_begin(s, 11 * SEC), 0);
	assert_int_equal(tls_stats_add_job(s, TLS_MAX_JOBS, 1), -EINVAL);
	{
		struct tls_flow_key k;
		struct tls_flow fl = { .job = TLS_JOB_NONE, .bytes = 1, .first_ns = 1 };

		make_key(&k, 0, 0);
		assert_int_equal(tls_stats_add_flow(s, &k, &fl), -EINVAL);
		fl.job = TLS_MAX_JOBS;
		assert_int_equal(tls_stats_add_flow(s, &k, &fl), -EINVAL);
	}
	assert_int_equal(tls_stats_end(s), 0);
	tls_stats_free(s);
}

static void test_job_counter_reset(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_job_info j;
	struct tls_stats_link_info l;
	uint64_t t = 50 * SEC;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	feed(s, t, 7, 1000000000, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.grew_ns, 0); /* a baseline only */
	feed(s, t += PERIOD, 7, 1000100000, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.bytes, 100000);
	assert_int_equal(j.grew_ns, t);
	feed(s, t + PERIOD, 7, 1000100000, NULL, NULL); /* no growth: kept */
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.grew_ns, t);
	t += PERIOD;
	/* the id is reused and its counters zeroed: 5000 bytes since */
	feed(s, t += PERIOD, 7, 5000, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.bytes, 5000); /* the new job's only */
	near(j.rate, 50000, 1e-12, "rate after a reset");
	tls_stats_link(s, &l);
	assert_int_equal(l.resets, 1);
	near(l.rate, 50000, 1e-12, "aggregate after a reset"); /* no garbage */
	feed(s, t += PERIOD, 7, 15000, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.bytes, 15000);
	/* left out of ten samples: its next reading is only a baseline, not
	 * ten periods' bytes in one (a false saturation) */
	for (int i = 0; i < 10; i++)
		feed(s, t += PERIOD, 8, 0, NULL, NULL);
	feed(s, t += PERIOD, 7, 15000 + 2000000, NULL, NULL);
	tls_stats_link(s, &l);
	assert_false(l.saturated);
	assert_true(l.rate == 0);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.bytes, 15000);
	feed(s, t += PERIOD, 7, 15000 + 2000000 + 100, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 7, &j), 0);
	assert_int_equal(j.bytes, 15100);
	tls_stats_free(s);
}

static void flow_rec(struct tls_flow *f, uint32_t job, uint64_t bytes, uint64_t first,
		     uint64_t last)
{
	memset(f, 0, sizeof(*f));
	f->job = job;
	f->bytes = bytes;
	f->first_ns = first;
	f->last_ns = last;
}

static void test_flow_resets(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_flow_info fi;
	struct tls_stats_link_info l;
	struct tls_flow_key k;
	struct tls_flow f, old;
	uint64_t t = 50 * SEC;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 1, 1);
	feed(s, t, 1, 0, NULL, NULL);
	/* a flow that starts within the period: all its bytes count */
	flow_rec(&f, 1, 10000, t, t + PERIOD);
	feed(s, t += PERIOD, 1, 10000, &k, &f);
	assert_int_equal(tls_stats_flows(s, 1, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 10000);
	assert_int_equal(fi.acc.active_ns, PERIOD);
	/* its counter goes down in place (a lost LRU entry re-created) */
	flow_rec(&f, 1, 4000, t - PERIOD, t + PERIOD);
	feed(s, t += PERIOD, 1, 14000, &k, &f);
	assert_int_equal(tls_stats_flows(s, 1, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 14000);
	/* a new socket on the same 4-tuple (first packet in this period),
	 * reported next to the old socket's final record: the new one counts */
	flow_rec(&old, 1, 4000, t - 2 * PERIOD, t);
	flow_rec(&f, 1, 7000, t + PERIOD / 2, t + PERIOD);
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_job(s, 1, 21000), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &f), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &old), 0); /* older: ignored */
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(tls_stats_flows(s, 1, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 21000);
	assert_int_equal(fi.first_ns, t - PERIOD / 2);
	/* it started mid-period: half a period of activity, not a whole one */
	assert_int_equal(fi.acc.active_ns, 2 * PERIOD + PERIOD / 2);
	/* the old record again, alone: still ignored */
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &old), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(tls_stats_flows(s, 1, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 21000);
	tls_stats_link(s, &l);
	assert_int_equal(l.resets, 2);
	/* a duplicate of the same incarnation: the larger counter wins, once */
	flow_rec(&f, 1, 9000, t - 3 * PERIOD / 2, t + PERIOD);
	flow_rec(&old, 1, 8000, t - 3 * PERIOD / 2, t + PERIOD / 2);
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &old), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &f), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &old), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(tls_stats_flows(s, 1, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 23000);
	tls_stats_free(s);
}

/* The bytes the engine holds of the flow with key k (job 1). */
static uint64_t flow_bytes(const struct tls_stats *s, const struct tls_flow_key *k)
{
	struct tls_stats_flow_info fi[4];
	size_t n = tls_stats_flows(s, 1, fi, 4);

	for (size_t i = 0; i < n; i++)
		if (!memcmp(&fi[i].key, k, sizeof(*k)))
			return fi[i].acc.bytes;
	fail_msg("no flow of that key");
	return 0;
}

/*
 * A flow the caller skips while it is idle (lib/bpf/slot_ways.h) and tells
 * the engine of (tls_stats_flow_unchanged) is the same to the engine as
 * one read with the same counters at every sample: its rates, active time
 * and bytes after it sends again, its job's too. Also when it moves in the
 * engine's table meanwhile (another flow before it forgotten): refused
 * then, and read by the caller, which puts its hint right. One simply not
 * fed is not the same (its period's base stays: the period after the skip
 * spans it).
 */
static void test_flow_unchanged(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s[3]; /* read each sample, told unchanged, not fed */
	struct tls_flow_key k, kc;
	struct tls_flow r, rc;
	uint32_t hint[3] = { 0, 0, 0 }, hc[3] = { 0, 0, 0 }, other;
	uint64_t t = 50 * SEC, jb = 0;
	struct tls_stats_flow_info fi[3];
	struct tls_stats_job_info ji[3];
	unsigned int refused = 0, told = 0;

	(void)state;
	conf_exact(&c);
	for (int e = 0; e < 3; e++)
		assert_int_equal(tls_stats_new(&c, &s[e]), 0);
	make_key(&k, 1, 1);
	make_key(&kc, 2, 2);
	flow_rec(&r, 1, 0, t + 1000, t + 1000);
	flow_rec(&rc, 2, 0, t + 1000, t + 1000);
	for (int i = 0; i < 60; i++) {
		bool idle = i >= 10 && i < 45;

		t += PERIOD;
		if (!idle) {
			r.bytes += 50000;
			r.packets += 40;
			r.last_ns = t - 2 * 1000 * 1000;
			jb += 52000;
		}
		rc.bytes += 1000;
		rc.packets++;
		rc.last_ns = t - 1000 * 1000;
		for (int e = 0; e < 3; e++) {
			/* c, before a in the table, goes: a moves */
			if (i == 20)
				tls_stats_forget_job(s[e], 2);
			assert_int_equal(tls_stats_begin(s[e], t), 0);
			assert_int_equal(tls_stats_add_job(s[e], 1, jb), 0);
			if (i < 20)
				assert_int_equal(
					tls_stats_add_flow_hint(s[e], &kc, &rc, t - PERIOD, &hc[e]),
					0);
			/* idle from its second idle sample on: what a reader
			 * that saw it idle once skips */
			if (!idle || i == 10 || e == 0) {
				assert_int_equal(
					tls_stats_add_flow_hint(s[e], &k, &r, t - PERIOD, &hint[e]),
					0);
			} else if (e == 1) {
				if (tls_stats_flow_unchanged(s[e], &hint[e])) {
					told++;
				} else { /* read after all, as the sampler does */
					refused++;
					assert_int_equal(tls_stats_add_flow_hint(s[e], &k, &r,
										 t - PERIOD,
										 &hint[e]),
							 0);
				}
			} else {
				tls_stats_flows_read(s[e]);
			}
			assert_int_equal(tls_stats_end(s[e]), 0);
		}
	}
	/* refused once, at the move, then told again */
	assert_int_equal(refused, 1);
	assert_int_equal(told, 33);
	for (int e = 0; e < 3; e++) {
		assert_int_equal(tls_stats_flows(s[e], 1, &fi[e], 1), 1);
		assert_int_equal(tls_stats_job(s[e], 1, &ji[e]), 0);
	}
	assert_int_equal(fi[1].acc.bytes, fi[0].acc.bytes);
	assert_int_equal(fi[1].acc.active_ns, fi[0].acc.active_ns);
	assert_int_equal(fi[1].last_active_ns, fi[0].last_active_ns);
	assert_true(fi[1].rate == fi[0].rate && fi[1].rate_avg == fi[0].rate_avg);
	assert_int_equal(ji[1].flows.bytes, ji[0].flows.bytes);
	assert_int_equal(ji[1].flows.active_ns, ji[0].flows.active_ns);
	assert_int_equal(ji[1].iter_ns, ji[0].iter_ns);
	/* not fed: not the same */
	assert_true(fi[2].rate_avg != fi[0].rate_avg || fi[2].acc.active_ns != fi[0].acc.active_ns);

	/* a hint the flow was not last fed through, out of range or NULL is
	 * refused */
	other = hint[1];
	assert_int_equal(tls_stats_begin(s[1], t += PERIOD), 0);
	assert_false(tls_stats_flow_unchanged(s[1], &other)); /* its index, not its hint */
	other = hint[1] + 5;
	assert_false(tls_stats_flow_unchanged(s[1], &other));
	assert_false(tls_stats_flow_unchanged(s[1], NULL));
	assert_true(tls_stats_flow_unchanged(s[1], &hint[1]));
	assert_int_equal(tls_stats_end(s[1]), 0);
	for (int e = 0; e < 3; e++)
		tls_stats_free(s[e]);
}

/*
 * A caller's hint (tls_stats_add_flow_hint) finds its flow without the
 * index; a hint that names another flow, or no flow any more, is not
 * trusted: the flow's bytes go to it alone, and the hint is corrected.
 */
/* A flow the engine does not track: hint 0 if it never will (history),
 * TLS_STATS_HINT_RETRY if it had no room for it now (so that a reader
 * skipping idle slots offers it again), and taken at the next sample that
 * has room. */
static void test_flow_hint_refused(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_flow_key ka, kb, kh;
	struct tls_flow a, b, h;
	uint32_t ha = 0, hb = 0, hh = 7;
	uint64_t t = 500 * SEC;

	(void)state;
	conf_exact(&c);
	c.max_flows = 1;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&ka, 1, 1);
	make_key(&kb, 1, 2);
	make_key(&kh, 1, 3);
	feed(s, t, 1, 0, NULL, NULL);
	flow_rec(&a, 1, 10000, t, t + PERIOD);
	flow_rec(&b, 1, 20000, t, t + PERIOD);
	flow_rec(&h, 1, 5000, SEC, 2 * SEC); /* idle far longer than flow_idle_ns */
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &ka, &a, t - PERIOD, &ha), 0);
	/* the table (one flow) full of flows fed in this sample */
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &hb), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &kh, &h, t - PERIOD, &hh), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(ha, 1);
	assert_int_equal(hb, TLS_STATS_HINT_RETRY);
	assert_int_equal(hh, 0);
	/* the retry hint is refused as unchanged (the caller reads the
	 * record), and b is taken where there is room (a not fed first) */
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_false(tls_stats_flow_unchanged(s, &hb));
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &hb), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(hb, 1);
	struct tls_stats_flow_info fi[2];

	assert_int_equal(tls_stats_flows(s, 1, fi, 2), 1);
	assert_memory_equal(&fi[0].key, &kb, sizeof(kb));
	tls_stats_free(s);
}

static void test_flow_hints(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_job_info j;
	struct tls_flow_key ka, kb, kc;
	struct tls_flow a, b, cf;
	uint32_t ha = 0, hb = 0, hc = 0, wrong;
	uint64_t t = 50 * SEC;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&ka, 1, 1);
	make_key(&kb, 1, 2);
	make_key(&kc, 2, 3);
	feed(s, t, 1, 0, NULL, NULL);
	flow_rec(&a, 1, 10000, t, t + PERIOD);
	flow_rec(&b, 1, 20000, t, t + PERIOD);
	flow_rec(&cf, 2, 5000, t, t + PERIOD);
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &kc, &cf, t - PERIOD, &hc), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &ka, &a, t - PERIOD, &ha), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &hb), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_true(ha && hb && hc);
	assert_true(ha != hb && hb != hc && ha != hc);
	assert_int_equal(flow_bytes(s, &ka), 10000);
	assert_int_equal(flow_bytes(s, &kb), 20000);

	/* a's record at b's hint: to a, and the hint now a's; b's by its own */
	a.bytes += 1000;
	b.bytes += 2000;
	wrong = hb;
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &ka, &a, t - PERIOD, &wrong), 0);
	assert_int_equal(wrong, ha);
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &hb), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &kc, &cf, t - PERIOD, &hc), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(flow_bytes(s, &ka), 11000);
	assert_int_equal(flow_bytes(s, &kb), 22000);
	assert_int_equal(tls_stats_job_flows(s, 1, &(unsigned int){ 0 }), 0);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.nflows, 2);

	/* job 2's flow (c, the first) goes and the last, b, moves into its
	 * place: b's hint is now one past the end, refused and corrected to
	 * c's old place; a's still holds */
	assert_int_equal(hc, 1);
	assert_int_equal(hb, 3);
	tls_stats_forget_job(s, 2);
	a.bytes += 1000;
	b.bytes += 2000;
	wrong = 1000; /* far out */
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &ka, &a, t - PERIOD, &ha), 0);
	assert_int_equal(ha, 2);
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &hb), 0);
	assert_int_equal(hb, 1);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(flow_bytes(s, &ka), 12000);
	assert_int_equal(flow_bytes(s, &kb), 24000);
	b.bytes += 2000;
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_flow_hint(s, &kb, &b, t - PERIOD, &wrong), 0);
	assert_int_equal(wrong, 1);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(flow_bytes(s, &ka), 12000);
	assert_int_equal(flow_bytes(s, &kb), 26000);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.nflows, 2);
	tls_stats_free(s);
}

/*
 * The end of a sample visits the jobs with flows or whose n may still
 * change, not all TLS_MAX_JOBS: a job known by its counter alone still
 * settles at n 0; a job whose flows expire goes back to n 0 and settles
 * there; and one that comes back with flows counts them again.
 */
static void test_jobs_at_rest(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_job_info j;
	struct tls_flow_key k;
	struct tls_flow f;
	uint64_t t = 50 * SEC;

	(void)state;
	conf_exact(&c);
	c.window_ns = SEC;
	c.flow_idle_ns = 5 * SEC;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 1, 1);
	feed(s, t, 3, 0, NULL, NULL);
	for (int i = 0; i < 12; i++)
		feed(s, t += PERIOD, 3, 0, NULL, NULL);
	assert_int_equal(tls_stats_job(s, 3, &j), 0);
	assert_true(j.n_settled);
	assert_int_equal(j.n, 0);

	/* job 1: a flow, n 1; idle past flow_idle_ns, it expires: n 0 */
	uint64_t bytes = 0;

	for (int i = 0; i < 20; i++) {
		bytes += 10000;
		flow_rec(&f, 1, bytes, 50 * SEC + PERIOD, t + PERIOD);
		feed(s, t += PERIOD, 1, bytes, &k, &f);
	}
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.n, 1);
	assert_true(j.n_settled);
	for (uint64_t end = t + c.flow_idle_ns + 2 * SEC; t < end;) {
		/* flow readings that find no record of it */
		assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
		assert_int_equal(tls_stats_add_job(s, 1, bytes), 0);
		tls_stats_flows_read(s);
		assert_int_equal(tls_stats_end(s), 0);
	}
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.nflows, 0);
	assert_int_equal(j.n, 0);
	assert_true(j.n_settled);

	/* back, with a new flow: n 1 again */
	uint64_t first = t + PERIOD / 2;

	bytes = 0;
	for (int i = 0; i < 3; i++) {
		bytes += 10000;
		flow_rec(&f, 1, bytes, first, t + PERIOD);
		feed(s, t += PERIOD, 1, bytes, &k, &f);
	}
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.nflows, 1);
	assert_int_equal(j.n, 1);
	tls_stats_free(s);
}

/* A flow not read in every sample (the sampler reads a quiet LRU map less
 * often): its bytes and active time run from its own last reading. */
static void test_flow_read_late(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_flow_info fi[3];
	struct tls_flow_key k, k2, k3;
	struct tls_flow f, f2;
	uint64_t t = 50 * SEC;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 1, 1);
	make_key(&k2, 1, 2);
	make_key(&k3, 1, 3);
	feed(s, t, 1, 0, NULL, NULL);
	flow_rec(&f, 1, 10000, t, t + PERIOD);
	feed(s, t += PERIOD, 1, 10000, &k, &f);
	for (int i = 0; i < 4; i++)
		feed(s, t += PERIOD, 1, 10000 + 10000 * (i + 1), NULL, NULL);
	/* read again five periods later, having sent all along */
	flow_rec(&f, 1, 50000, t - 5 * PERIOD, t + PERIOD);
	assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
	assert_int_equal(tls_stats_add_job(s, 1, 110000), 0);
	assert_int_equal(tls_stats_add_flow(s, &k, &f), 0);
	/* first read now, from a source last read three periods ago: its first
	 * packet came after that, so all its bytes count, over its own time */
	flow_rec(&f2, 1, 20000, t - 2 * PERIOD, t);
	assert_int_equal(tls_stats_add_flow_since(s, &k2, &f2, t - 3 * PERIOD), 0);
	/* the same record read as if its source were read every period: its
	 * first packet predates the previous sample, so it is a baseline */
	assert_int_equal(tls_stats_add_flow(s, &k3, &f2), 0);
	assert_int_equal(tls_stats_end(s), 0);
	assert_int_equal(tls_stats_flows(s, 1, fi, 3), 3);
	assert_int_equal(fi[0].acc.bytes, 50000);
	assert_int_equal(fi[0].acc.active_ns, 6 * PERIOD);
	near(fi[0].rate, 40000 * 1e9 / (5 * PERIOD), 1e-12, "rate over five periods");
	assert_int_equal(fi[1].acc.bytes, 20000);
	assert_int_equal(fi[1].acc.active_ns, 2 * PERIOD);
	assert_int_equal(fi[2].acc.bytes, 0);
	tls_stats_free(s);
}

/* Bursts inside a period take their own length, not the period's. */
static void test_burst_active_time(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_flow_info fi;
	struct tls_flow_key k;
	struct tls_flow f;
	uint64_t t = 50 * SEC, bytes = 0;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 3, 0);
	feed(s, t, 3, 0, NULL, NULL);
	/* exact stamps: 20 ms from 10 ms to 30 ms into the period */
	flow_rec(&f, 3, 20000, t + 10 * MS, t + 30 * MS);
	feed(s, t += PERIOD, 3, 20000, &k, &f);
	assert_int_equal(tls_stats_flows(s, 3, &fi, 1), 1);
	assert_int_equal(fi.acc.active_ns, 20 * MS);
	near(fi.est.b_wk, 1e6, 1e-9, "B_wk of a 20 ms burst");
	tls_stats_free(s);

	/* coarse stamps (4 ms ticks, as the classifier's): a 1.05 s burst at
	 * 1 MB/s starting 37 ms into a period, sampled every 100 ms */
	conf_exact(&c);
	c.clock_slack_ns = 4 * MS;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	t = 50 * SEC;
	feed(s, t, 3, 0, NULL, NULL);
	memset(&f, 0, sizeof(f));
	f.job = 3;
	for (int p = 0; p < 13; p++) {
		uint64_t t0 = t, t1 = t + PERIOD, start = 50 * SEC + 37 * MS,
			 stop = start + 1050 * MS;
		uint64_t a = t0 > start ? t0 : start, b = t1 < stop ? t1 : stop;

		if (b > a) {
			bytes += (b - a) / 1000; /* 1 MB/s = 1 byte per us */
			f.bytes = bytes;
			if (!f.first_ns)
				f.first_ns = start / (4 * MS) * (4 * MS);
			f.last_ns = b / (4 * MS) * (4 * MS);
		}
		t = t1;
		feed(s, t, 3, bytes, f.first_ns ? &k : NULL, &f);
	}
	assert_int_equal(tls_stats_flows(s, 3, &fi, 1), 1);
	assert_int_equal(fi.acc.bytes, 1050000);
	near(fi.est.b_wk, 1e6, 0.02, "B_wk of a 1.05 s burst with coarse stamps");
	tls_stats_free(s);
}

/*
 * A flow as the classifier really stamps it: it sends in stretches, each
 * from on to off with a packet every gap ns (gap2: every other gap is gap2
 * instead, for irregular spacing) at rate B/s; each packet stamped with the
 * coarse clock, whose ticks (every tick ns) fall phase ns before each
 * multiple of tick, the sampler's times being such multiples. The truth is
 * the stretches: bytes sent, and time spent sending.
 */
struct stretch {
	uint64_t on, off, gap, gap2;
	double rate;
};

struct pkt_flow {
	const struct stretch *st;
	size_t n;
	uint64_t tick, phase;
};

static uint64_t coarse(const struct pkt_flow *p, uint64_t x)
{
	return (x + p->phase) / p->tick * p->tick - p->phase;
}

/* Packet k of a stretch leaves at on + its offset; irregular spacing
 * alternates gap and gap2. */
static uint64_t pkt_time(const struct stretch *st, uint64_t k)
{
	uint64_t g2 = st->gap2 ? st->gap2 : st->gap;

	return st->on + k / 2 * (st->gap + g2) + (k % 2 ? st->gap : 0);
}

static uint64_t pkt_bytes(const struct stretch *st)
{
	uint64_t g2 = st->gap2 ? st->gap2 : st->gap;

	return (uint64_t)llround(st->rate * (st->gap + g2) / 2 / 1e9);
}

/* The classifier's record at time t (packets sent before t); false if none
 * was sent yet. The truth so far into *bytes and *ns when not NULL. */
static bool pkt_record(const struct pkt_flow *p, uint32_t job, uint64_t t, struct tls_flow *f,
		       uint64_t *bytes, uint64_t *ns)
{
	uint64_t last = 0;

	memset(f, 0, sizeof(*f));
	f->job = job;
	if (bytes)
		*bytes = *ns = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct stretch *st = &p->st[i];
		uint64_t k = 0;

		while (pkt_time(st, k) < st->off && pkt_time(st, k) < t) {
			f->bytes += pkt_bytes(st);
			f->packets++;
			last = pkt_time(st, k);
			k++;
		}
		if (!k)
			continue;
		if (!f->first_ns)
			f->first_ns = coarse(p, st->on);
		f->last_ns = coarse(p, last);
		if (bytes) {
			*bytes += k * pkt_bytes(st);
			/* all of the stretch once it is over, else up to t */
			*ns += (t < st->off ? t : st->off) - st->on;
		}
	}
	return f->packets > 0;
}

/* Feed the flow to a new engine every period from t0 to t1; its flow info
 * (B_wk etc.) and the truth (bytes, sending time). */
static void pkt_run(const struct pkt_flow *p, uint64_t t0, uint64_t t1,
		    struct tls_stats_flow_info *fi, uint64_t *bytes, uint64_t *ns)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_flow_key k;
	struct tls_flow f;

	conf_exact(&c);
	c.clock_slack_ns = p->tick;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 1, 0);
	for (uint64_t t = t0; t <= t1; t += PERIOD) {
		bool sent = pkt_record(p, 1, t, &f, bytes, ns);

		feed(s, t, 1, sent ? f.bytes : 0, sent ? &k : NULL, &f);
	}
	assert_int_equal(tls_stats_flows(s, 1, fi, 1), 1);
	tls_stats_free(s);
}

/*
 * A flow sending all along, its packets 1 ms apart, the coarse clock's tick
 * 0.2 ms before each sample: the last packet before a sample is stamped in
 * the tick before the sample's, so its stamp trails the sample by more
 * than a tick although the flow is sending. Taking that for a stop cut
 * ~2 ms off every 100 ms period: B_wk 2% high on a steady flow.
 */
static void test_steady_flow_coarse_clock(void **state)
{
	static const struct stretch st = { .on = 50 * SEC + 10300 * 1000,
					   .off = 53 * SEC + 10300 * 1000,
					   .gap = MS,
					   .rate = 5e6 };
	const struct pkt_flow p = { .st = &st, .n = 1, .tick = 4 * MS, .phase = 200 * 1000 };
	struct tls_stats_flow_info fi;
	uint64_t bytes, ns;

	(void)state;
	pkt_run(&p, 50 * SEC, 54 * SEC, &fi, &bytes, &ns);
	assert_int_equal(fi.acc.bytes, bytes);
	near((double)fi.acc.active_ns, (double)ns, 0.005,
	     "active time of a steady flow, coarse clock out of phase");
	near(fi.est.b_wk, st.rate, 0.005, "B_wk of a steady flow, coarse clock out of phase");
}

/*
 * A slow flow (0.6 MB/s) sending all along with irregular gaps between its
 * packets, 4 and 16 ms, longer than the clock's tick: a stamp a couple of
 * ticks old is no stop for it. Its own spacing says how long a pause must
 * be to be one.
 */
static void test_slow_flow_gaps(void **state)
{
	static const struct stretch st = { .on = 50 * SEC + 7 * MS,
					   .off = 53 * SEC + 7 * MS,
					   .gap = 4 * MS,
					   .gap2 = 16 * MS,
					   .rate = 0.6e6 };
	const struct pkt_flow p = { .st = &st, .n = 1, .tick = 4 * MS, .phase = 1 * MS };
	struct tls_stats_flow_info fi;
	uint64_t bytes, ns;

	(void)state;
	pkt_run(&p, 50 * SEC, 54 * SEC, &fi, &bytes, &ns);
	assert_int_equal(fi.acc.bytes, bytes);
	near((double)fi.acc.active_ns, (double)ns, 0.01, "active time of a slow, gappy flow");
	near(fi.est.b_wk, st.rate, 0.01, "B_wk of a slow, gappy flow");
}

/*
 * On and off: bursts of 0.5 to 0.9 s, 0.2 to 0.7 s apart, at 3 to 5 MB/s
 * (a worker pulling model updates among others), starting anywhere within
 * the 100 ms between two readings. The stamps show where a burst ends, not
 * where the next one starts (a flow's record keeps its first packet ever):
 * counting a resumed flow as active since the previous reading adds 50 ms
 * per burst on average, B_wk ~6% low. Its packets in the period at the
 * spacing it had while it sent place the resumption.
 */
static void test_on_off_bursts(void **state)
{
	struct stretch st[24] = {};
	struct pkt_flow p = { .st = st, .n = 24, .tick = 4 * MS, .phase = 3 * MS };
	struct tls_stats_flow_info fi;
	uint64_t t = 50 * SEC + 13 * MS, bytes, ns;
	unsigned int rng = 7;

	(void)state;
	for (size_t i = 0; i < p.n; i++) {
		rng = rng * 1103515245u + 12345u;
		st[i].on = t;
		st[i].off = t + 500 * MS + (rng >> 8) % 400 * MS;
		st[i].gap = MS;
		st[i].rate = 3e6 + (rng >> 4) % 2000 * 1000.0;
		t = st[i].off + 200 * MS + (rng >> 12) % 500 * MS + (rng >> 3) % 1000 * 1000;
	}
	pkt_run(&p, 50 * SEC, t + SEC, &fi, &bytes, &ns);
	assert_int_equal(fi.acc.bytes, bytes);
	near((double)fi.acc.active_ns, (double)ns, 0.02, "active time of on-off bursts");
	near(fi.est.b_wk, bytes * 1e9 / ns, 0.02, "B_wk of on-off bursts");
	/* B_req (the link is never saturated here) only from the periods whose
	 * active time is known: the placed starts are estimates */
	near(fi.est.b_req, bytes * 1e9 / ns, 0.02, "B_req of on-off bursts");
	assert_true(fi.acc.unsat_ns < fi.acc.active_ns);
}

/*
 * P solved of an observation takes its job's B_req, not the observation's
 * own: two workers pull 5 MB/s each with the link free (n = 2), then four
 * (n = 4) take turns: 2 periods sharing the saturated link, 2 periods two
 * at a time at 5 MB/s, and 1 period all four at 3 MB/s, the link at 83%:
 * unsaturated by the period's verdict, contended within it (as at a
 * large n, where the link is rarely free, and mostly only partly). Its
 * own "uncontended" rate is 4 MB/s, all the job's flows' 4.71 MB/s (26.4
 * MB in 5.6 s: the periods of a flow that was sending at their start; one
 * that resumed has its start placed, an estimate); the job's B_req is the
 * smallest n's that was unsaturated for a second, n = 2's 5 MB/s, the
 * workers' demand: P solved 0.86, which is the formula's with it (0.5 with
 * the observation's own, 0.82 with all flows').
 */
static void test_obs_b_req_of_job(void **state)
{
	uint64_t sent[MAX_SIM_FLOWS] = {};
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	struct tls_stats_obs o[4];
	struct tls_stats_link_info l;
	struct tls_stats_calib cal;
	struct sim m;

	(void)state;
	conf_exact(&c);
	/* n = 2 holds for 2 s: over the window, so it is an observation */
	c.window_ns = 1 * SEC;
	sim_start(&m, &c);
	for (int i = 0; i < 4; i++)
		sim_flow(&m, 1);
	sent[0] = sent[1] = REQ_PERIOD;
	for (int p = 0; p < 20; p++)
		sim_step(&m, sent, false);
	for (int it = 0; it < 4; it++) {
		for (int p = 0; p < 2; p++) {
			for (int i = 0; i < 4; i++)
				sent[i] = BPS_PERIOD / 4;
			sim_step(&m, sent, true);
		}
		for (int p = 0; p < 2; p++) {
			for (int i = 0; i < 4; i++)
				sent[i] = i / 2 == p ? REQ_PERIOD : 0;
			sim_step(&m, sent, false);
		}
		for (int i = 0; i < 4; i++)
			sent[i] = 300000;
		sim_step(&m, sent, false);
	}
	assert_int_equal(tls_stats_job(m.s, 1, &j), 0);
	near(j.est.b_req, B_REQ, 1e-9, "the job's B_req: n = 2's");
	near(j.flows.unsat_bytes * 1e9 / j.flows.unsat_ns, 26.4e6 / 5.6, 1e-9,
	     "all the job's flows' unsaturated rate");
	tls_stats_link(m.s, &l);
	assert_int_equal(tls_stats_observations(m.s, 1, TLS_FIT_SOLVED, o, 4), 2);
	assert_int_equal(o[1].n, 4);
	near(o[1].acc.unsat_bytes * 1e9 / o[1].acc.unsat_ns, 4e6, 1e-9, "n=4 own unsaturated rate");
	near(o[1].est.b_wk, 3.8e6, 1e-9, "n=4 B_wk");
	near(o[1].est.b_req, j.est.b_req, 1e-12, "n=4 observation's B_req is its job's");
	near(o[1].est.p_solved, tls_spotdnn_p_solve(3.8e6, B_PS, 4, B_REQ), 1e-9,
	     "n=4 P solved with its job's B_req");
	near(o[1].est.p_solved, 0.857, 0.01, "n=4 P solved");
	assert_int_equal(o[1].use, TLS_OBS_USED);
	/* the host's B_req by the same rule, not every flow's 4.71 MB/s */
	tls_stats_calibrate(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	near(cal.b_req, B_REQ, 1e-9, "the host's B_req: the job's n = 2's");
	/* the job forgotten (its PS gone): the host's B_req and its retired
	 * observations' keep its n = 2's, not every flow's 4.71 MB/s */
	tls_stats_forget_job(m.s, 1);
	tls_stats_calibrate(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	near(cal.b_req, B_REQ, 1e-9, "the host's B_req, the job forgotten");
	assert_int_equal(tls_stats_observations(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, o, 4), 2);
	for (int i = 0; i < 2; i++) {
		assert_true(o[i].retired);
		near(o[i].est.b_req, B_REQ, 1e-9, "a retired observation's B_req: its job's");
	}
	/* forgotten again (the id reused meanwhile by no one): counted once */
	tls_stats_forget_job(m.s, 1);
	tls_stats_calibrate(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	near(cal.b_req, B_REQ, 1e-9, "the host's B_req, forgotten twice");
	sim_stop(&m);
}

/*
 * Workers that join one after another, as the push does at a job's start
 * (each worker's first push begins as its first pull ends, all within a
 * second or two): n passes 1..7, two periods each, before it holds at 8.
 * Only an n that held for the window is an observation: the ramp's time is
 * the job's transitional time, its n = 2..7 observations go, and the
 * n = 1 observation that held before is as it was. While an n has not yet
 * held for the window, its observation is there (provisional).
 */
static void test_transitional_n(void **state)
{
	uint64_t sent[MAX_SIM_FLOWS] = {};
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	struct tls_stats_obs o[16], one;
	struct tls_stats_link_info l;
	uint64_t ramp_bytes = 0, ramp_ns = 0;
	struct sim m;

	(void)state;
	conf_exact(&c);
	c.window_ns = 1 * SEC;
	sim_start(&m, &c);
	for (int i = 0; i < 8; i++)
		sim_flow(&m, 1);
	/* n = 1 for 3 s, then idle until it left the window and n = 0 held */
	sent[0] = REQ_PERIOD;
	for (int p = 0; p < 30; p++)
		sim_step(&m, sent, false);
	sent[0] = 0;
	for (int p = 0; p < 25; p++)
		sim_step(&m, sent, false);
	assert_int_equal(tls_stats_observations(m.s, 1, TLS_FIT_SOLVED, o, 16), 1);
	one = o[0];
	assert_int_equal(one.n, 1);
	assert_int_equal(one.acc.active_ns, 3 * SEC);
	assert_int_equal(tls_stats_job(m.s, 1, &j), 0);
	assert_int_equal(j.n, 0);
	assert_true(j.n_settled);
	assert_int_equal(j.transitional.active_ns, 0);

	/* the ramp: worker k joins at period 2k and sends from then on */
	for (int k = 0; k < 7; k++) {
		for (int p = 0; p < 2; p++) {
			for (int i = 0; i <= k; i++)
				sent[i] = BPS_PERIOD / 8;
			sim_step(&m, sent, false);
			ramp_bytes += (k + 1) * (BPS_PERIOD / 8);
			ramp_ns += (k + 1) * PERIOD;
		}
		/* provisional: the current n is observed while it holds */
		assert_int_equal(tls_stats_job(m.s, 1, &j), 0);
		assert_int_equal(j.n, k + 1);
		assert_false(j.n_settled);
		assert_int_equal(tls_stats_observations(m.s, 1, TLS_FIT_SOLVED, o, 16), k ? 2 : 1);
		assert_int_equal(o[k ? 1 : 0].n, k + 1);
	}
	/* n = 8 for 3 s: it holds */
	for (int i = 0; i < 8; i++)
		sent[i] = BPS_PERIOD / 8;
	for (int p = 0; p < 30; p++)
		sim_step(&m, sent, true);
	assert_int_equal(tls_stats_job(m.s, 1, &j), 0);
	assert_int_equal(j.n, 8);
	assert_true(j.n_settled);
	assert_int_equal(j.transitional.active_ns, ramp_ns);
	assert_int_equal(j.transitional.bytes, ramp_bytes);
	/* the job's own figures count everything */
	assert_int_equal(j.flows.active_ns, 3 * SEC + ramp_ns + 24 * SEC);
	assert_int_equal(tls_stats_observations(m.s, 1, TLS_FIT_SOLVED, o, 16), 2);
	assert_int_equal(o[0].n, 1);
	assert_memory_equal(&o[0].acc, &one.acc, sizeof(one.acc));
	assert_int_equal(o[0].first_ns, one.first_ns);
	assert_int_equal(o[0].last_ns, one.last_ns);
	assert_int_equal(o[1].n, 8);
	assert_int_equal(o[1].acc.active_ns, 24 * SEC);
	near(o[1].est.b_wk, B_PS / 8, 1e-9, "n=8 B_wk");
	/* the observations the ramp made and took back left no slots behind */
	tls_stats_link(m.s, &l);
	assert_int_equal(l.obs, 2);
	sim_stop(&m);
}

/* Whatever the number of flows seen, the table holds max_flows. */
static void test_eviction_bounded(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_link_info l;
	struct tls_stats_job_info j;
	uint64_t t = 50 * SEC, seen = 0, total = 0;

	(void)state;
	conf_exact(&c);
	c.max_flows = 16;
	c.group_ns = 200 * MS;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	feed(s, t, 1, 0, NULL, NULL);
	for (int p = 0; p < 200; p++) {
		uint64_t t_prev = t;

		t += PERIOD;
		assert_int_equal(tls_stats_begin(s, t), 0);
		/* 50 new one-period flows every period */
		for (int i = 0; i < 50; i++) {
			struct tls_flow_key k;
			struct tls_flow f;

			make_key(&k, 1, (p * 50 + i) % 60000);
			k.lport = htons(1000 + p);
			flow_rec(&f, 1, 1000, t_prev, t);
			assert_int_equal(tls_stats_add_flow(s, &k, &f), 0);
			seen++;
		}
		total += 50 * 1000;
		assert_int_equal(tls_stats_add_job(s, 1, total), 0);
		assert_int_equal(tls_stats_end(s), 0);
		tls_stats_link(s, &l);
		assert_true(l.flows <= 16);
	}
	tls_stats_link(s, &l);
	assert_int_equal(l.max_flows, 16);
	/* every flow seen was tracked then evicted, or refused: none vanished */
	assert_int_equal(l.flows + l.flows_evicted + l.flows_expired + l.flows_dropped, seen);
	/* a full table of idle flows makes room for the new ones: the newest
	 * period's flows are tracked, older ones evicted */
	assert_true(l.flows_evicted > 0);
	assert_int_equal(l.flows, 16);
	{
		struct tls_stats_flow_info fi[16];

		assert_int_equal(tls_stats_flows(s, 1, fi, 16), 16);
		for (int i = 0; i < 16; i++)
			assert_int_equal(ntohs(fi[i].key.lport), 1000 + 199);
	}
	/* the job keeps the bytes of the flows it tracked, evicted ones too */
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.flows.bytes, (seen - l.flows_dropped) * 1000);
	assert_int_equal(j.nflows, l.flows);

	/* idle flows go after flow_idle_ns; their history stays with the job.
	 * The flow readings find none: they are gone from the maps. Samples
	 * without a flow reading leave the flows alone. */
	for (int p = 0; p < 700; p++) {
		assert_int_equal(tls_stats_begin(s, t += PERIOD), 0);
		assert_int_equal(tls_stats_add_job(s, 1, total), 0);
		if (p % 10 == 0)
			tls_stats_flows_read(s);
		assert_int_equal(tls_stats_end(s), 0);
		if (p == 10) {
			tls_stats_link(s, &l);
			assert_int_equal(l.flows, 16);
		}
	}
	tls_stats_link(s, &l);
	assert_int_equal(l.flows, 0);
	assert_true(l.flows_expired >= 16);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	assert_int_equal(j.nflows, 0);
	assert_int_equal(j.flows.bytes, (seen - l.flows_dropped) * 1000);
	tls_stats_free(s);
}

/* A record of a flow long finished (the classifier's LRU keeps them) is not
 * tracked: it would only push live flows out. */
static void test_stale_record(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	struct tls_stats_link_info l;
	struct tls_flow_key k;
	struct tls_flow f;
	uint64_t t = 500 * SEC;

	(void)state;
	conf_exact(&c);
	assert_int_equal(tls_stats_new(&c, &s), 0);
	make_key(&k, 2, 0);
	flow_rec(&f, 2, 99999, 100 * SEC, 101 * SEC);
	feed(s, t, 2, 0, &k, &f);
	feed(s, t + PERIOD, 2, 0, &k, &f);
	tls_stats_link(s, &l);
	assert_int_equal(l.flows, 0);
	tls_stats_free(s);
}

static void test_observations_bounded(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_link_info l;
	struct tls_stats_obs o[8];
	struct sim m;
	unsigned int first;

	(void)state;
	conf_exact(&c);
	c.max_obs = 3;
	sim_start(&m, &c);
	/* five jobs, five (job, n) observations, room for three */
	for (size_t i = 0; i < NSCEN; i++)
		sim_job(&m, scen[i].job, scen[i].n, scen[i].C, scen[i].U, 1, 0, &first);
	tls_stats_link(m.s, &l);
	assert_int_equal(l.obs, 3);
	assert_int_equal(l.max_obs, 3);
	assert_int_equal(l.obs_evicted, 2);
	assert_int_equal(tls_stats_observations(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, o, 8), 3);
	/* the most recent ones stay */
	assert_int_equal(o[0].job, 3);
	assert_int_equal(o[2].job, 5);
	sim_stop(&m);
}

static void test_forget_and_reset(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	struct tls_stats_link_info l;
	struct tls_stats_obs o[8];
	struct sim m;
	unsigned int first;
	size_t n;

	(void)state;
	conf_exact(&c);
	sim_start(&m, &c);
	sim_job(&m, 1, 4, 1, 4, 2, 0, &first);
	sim_job(&m, 2, 9, 9, 11, 2, 0, &first);
	tls_stats_forget_job(m.s, 1);
	assert_int_equal(tls_stats_job(m.s, 1, &j), -ENOENT);
	assert_int_equal(tls_stats_flows(m.s, 1, NULL, 0), 0);
	n = tls_stats_observations(m.s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, o, 8);
	assert_int_equal(n, 2);
	assert_true(o[0].retired); /* kept for the fit, as its own point */
	assert_int_equal(o[0].use, TLS_OBS_USED);
	assert_false(o[1].retired);
	/* per job: the retired one is not job 1's any more */
	n = tls_stats_observations(m.s, 1, TLS_FIT_SOLVED, o, 8);
	assert_int_equal(o[0].use, TLS_OBS_OTHER_JOB);
	tls_stats_reset(m.s);
	tls_stats_link(m.s, &l);
	assert_int_equal(l.samples, 0);
	assert_int_equal(l.flows, 0);
	assert_int_equal(l.obs, 0);
	assert_int_equal(tls_stats_job(m.s, 2, &j), -ENOENT);
	sim_stop(&m);
}

static void test_conf_check(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats *s;
	char err[128];

	(void)state;
	tls_stats_conf_defaults(&c);
	assert_int_equal(tls_stats_conf_check(&c, err, sizeof(err)), 0);
	c.sat_pct = 0;
	assert_int_equal(tls_stats_conf_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "saturation"));
	assert_int_equal(tls_stats_new(&c, &s), -EINVAL);
	assert_null(s);
	tls_stats_conf_defaults(&c);
	c.max_flows = 0;
	assert_int_equal(tls_stats_conf_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flows"));
	tls_stats_conf_defaults(&c);
	c.group_ns = 0;
	assert_int_equal(tls_stats_conf_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "group"));
}

/* ---- export ---- */

static struct sim *calibrated(void)
{
	static struct sim m;
	struct tls_stats_conf c;
	unsigned int first[NSCEN];

	conf_exact(&c);
	sim_start(&m, &c);
	run_scenarios(&m, 2, 0, first);
	return &m;
}

static double value_of(const char *text, const char *name)
{
	char pat[64];
	const char *p;
	double v;

	snprintf(pat, sizeof(pat), "\n%s = ", name);
	p = strstr(text, pat);
	if (!p || sscanf(p + strlen(pat), "%lf", &v) != 1)
		return NAN;
	return v;
}

/* The module printed for cal with param bytes: its text (malloc'ed), the
 * return value in *ret. */
static char *spotdnn_module(const struct tls_stats_calib *cal, double param, int *ret, char *err,
			    size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*ret = tls_stats_print_spotdnn(f, cal, param, "ps", err, errlen);
	fclose(f);
	return text;
}

static void test_spotdnn_text(void **state)
{
	struct sim *m = calibrated();
	struct tls_stats_calib cal;
	char err[256] = "";
	char *text;
	int ret;

	(void)state;
	tls_stats_calibrate(m->s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	assert_int_equal(cal.fit_err, 0);
	text = spotdnn_module(&cal, 46.8e6, &ret, err, sizeof(err));
	assert_int_equal(ret, 0);
	/* spotDNN's names: bandwidths in MB/s, param in MB (10^6 bytes) */
	near(value_of(text, "bps"), B_PS / 1e6, 1e-5, "bps");
	near(value_of(text, "instance_bandwith"), B_REQ / 1e6, 1e-5, "instance_bandwith");
	near(value_of(text, "param"), 46.8, 1e-9, "param");
	near(value_of(text, "a"), TRUE_A, 1e-5, "a");
	near(value_of(text, "b"), TRUE_B, 1e-5, "b");
	/* instance_comp with the profile's own values, and the line to import it */
	assert_non_null(strstr(text, "\ninstance_comp = _profile.instance_time - (\n"));
	assert_non_null(strstr(text, "#     from profiler.tlsd_calib import *\n"));
	assert_non_null(strstr(text, "a and b have no unit"));
	free(text);

	/* all or nothing: without param, or without a fit, nothing is printed */
	text = spotdnn_module(&cal, NAN, &ret, err, sizeof(err));
	assert_int_equal(ret, -ENODATA);
	assert_string_equal(text, "");
	assert_non_null(strstr(err, "param"));
	free(text);
	tls_stats_calibrate(m->s, 1, TLS_FIT_SOLVED, &cal);
	assert_int_equal(cal.fit_err, -EDOM);
	text = spotdnn_module(&cal, 46.8e6, &ret, err, sizeof(err));
	assert_int_equal(ret, -ENODATA);
	assert_string_equal(text, "");
	assert_non_null(strstr(err, "a and b are not determined"));
	free(text);
	sim_stop(m);
}

static void test_calib_json(void **state)
{
	struct sim *m = calibrated();
	struct tls_stats_calib cal, back;
	struct tls_stats_obs obs[16], ob;
	struct json_object *o, *parsed, *arr, *sp, *v;
	char err[128];
	size_t n;

	(void)state;
	tls_stats_calibrate(m->s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &cal);
	n = tls_stats_observations(m->s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, obs, 16);
	assert_int_equal(n, NSCEN);
	o = tls_stats_calib_json(&cal, obs, n);
	assert_non_null(o);
	/* through text, as over the socket */
	parsed = json_tokener_parse(json_object_to_json_string(o));
	assert_non_null(parsed);
	assert_int_equal(tls_stats_calib_from_json(parsed, &back, err, sizeof(err)), 0);
	assert_int_equal(back.fit_err, 0);
	near(back.fit.a, cal.fit.a, 1e-12, "a back");
	near(back.fit.b, cal.fit.b, 1e-12, "b back");
	near(back.b_req, cal.b_req, 1e-12, "B_req back");
	near(back.link.b_ps, cal.link.b_ps, 1e-12, "B_ps back");
	assert_int_equal(back.link.sat_ns, cal.link.sat_ns);
	assert_int_equal(back.fit.nobs, cal.fit.nobs);
	assert_int_equal(back.job, TLS_STATS_ALL_JOBS);
	/* every observation behind the fit */
	assert_true(json_object_object_get_ex(parsed, "observations", &arr));
	assert_int_equal(json_object_array_length(arr), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tls_stats_obs_from_json(json_object_array_get_idx(arr, i), &ob,
							 err, sizeof(err)),
				 0);
		assert_int_equal(ob.n, obs[i].n);
		assert_int_equal(ob.use, TLS_OBS_USED);
		near(ob.est.p_solved, obs[i].est.p_solved, 1e-12, "P back");
	}
	assert_true(json_object_object_get_ex(parsed, "spotdnn", &sp));
	assert_true(json_object_object_get_ex(sp, "instance_bandwith", &v));
	near(json_object_get_double(v), B_REQ / 1e6, 1e-9, "spotdnn.instance_bandwith");
	json_object_put(parsed);
	json_object_put(o);

	/* no fit: a and b are null, and come back as "no fit" */
	tls_stats_calibrate(m->s, 2, TLS_FIT_DIRECT, &cal);
	o = tls_stats_calib_json(&cal, NULL, 0);
	parsed = json_tokener_parse(json_object_to_json_string(o));
	assert_true(json_object_object_get_ex(parsed, "spotdnn", &sp));
	assert_true(json_object_object_get_ex(sp, "a", &v));
	assert_null(v);
	assert_int_equal(tls_stats_calib_from_json(parsed, &back, err, sizeof(err)), 0);
	assert_int_not_equal(back.fit_err, 0);
	assert_int_equal(back.source, TLS_FIT_DIRECT);
	assert_int_equal(back.job, 2);
	json_object_put(parsed);
	json_object_put(o);
	sim_stop(m);
}

static void test_flow_job_json(void **state)
{
	struct sim *m = calibrated();
	struct tls_stats_flow_info fl[64], back;
	struct tls_stats_job_info j, jb;
	struct json_object *o, *p;
	char err[128];
	size_t n;

	(void)state;
	n = tls_stats_flows(m->s, 2, fl, 64);
	assert_int_equal(n, 9);
	/* one IPv6 flow too */
	fl[1].key.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "fd00::1", fl[1].key.laddr), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd00::2:3", fl[1].key.raddr), 1);
	for (int i = 0; i < 2; i++) {
		o = tls_stats_flow_json(&fl[i]);
		p = json_tokener_parse(json_object_to_json_string(o));
		assert_int_equal(tls_stats_flow_from_json(p, &back, err, sizeof(err)), 0);
		assert_memory_equal(&back.key, &fl[i].key, sizeof(back.key));
		assert_int_equal(back.acc.bytes, fl[i].acc.bytes);
		assert_int_equal(back.acc.active_ns, fl[i].acc.active_ns);
		near(back.est.b_wk, fl[i].est.b_wk, 1e-12, "flow B_wk back");
		json_object_put(p);
		json_object_put(o);
	}
	assert_int_equal(tls_stats_job(m->s, 3, &j), 0);
	o = tls_stats_job_json(&j);
	p = json_tokener_parse(json_object_to_json_string(o));
	assert_int_equal(tls_stats_job_from_json(p, &jb, err, sizeof(err)), 0);
	assert_int_equal(jb.job, 3);
	assert_int_equal(jb.flows.bytes, j.flows.bytes);
	near(jb.est.p_solved, j.est.p_solved, 1e-12, "job P back");
	json_object_put(p);
	json_object_put(o);
	sim_stop(m);
}

static void test_json_bad_input(void **state)
{
	static const char *bad_flow[][2] = {
		{ "{}", "\"job\"" },
		{ "[1,2]", "not a JSON object" },
	};
	struct tls_stats_flow_info fl, good;
	struct tls_stats_calib cal;
	struct json_object *o, *p;
	struct tls_flow_key k = {};
	char err[128];

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		p = json_tokener_parse(bad_flow[i][0]);
		assert_int_equal(tls_stats_flow_from_json(p, &fl, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, bad_flow[i][1]));
		json_object_put(p);
	}
	/* a good record with one field broken at a time */
	memset(&good, 0, sizeof(good));
	make_key(&good.key, 1, 2);
	good.job = 1;
	good.est.b_wk = NAN;
	o = tls_stats_flow_json(&good);
	json_object_object_add(o, "bytes", json_object_new_int(-5));
	assert_int_equal(tls_stats_flow_from_json(o, &fl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"bytes\""));
	json_object_object_add(o, "bytes", json_object_new_int(5));
	json_object_object_add(o, "remote", json_object_new_string("[fd00::1]:80"));
	assert_int_equal(tls_stats_flow_from_json(o, &fl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"remote\""));
	json_object_object_add(o, "remote", json_object_new_string("198.18.0.9:70000"));
	assert_int_equal(tls_stats_flow_from_json(o, &fl, err, sizeof(err)), -EINVAL);
	json_object_object_add(o, "remote", json_object_new_string("198.18.0.9:7"));
	json_object_object_add(o, "job", json_object_new_string("1"));
	assert_int_equal(tls_stats_flow_from_json(o, &fl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"job\""));
	json_object_object_add(o, "job", json_object_new_int(1));
	assert_int_equal(tls_stats_flow_from_json(o, &fl, err, sizeof(err)), 0);
	assert_true(isnan(fl.est.b_wk));
	json_object_put(o);

	p = json_tokener_parse("{\"job\":null,\"source\":\"median\"}");
	assert_int_equal(tls_stats_calib_from_json(p, &cal, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"source\""));
	json_object_put(p);

	/* endpoint text */
	assert_int_equal(tls_flow_endpoint_parse("198.18.0.1:9000", &k, false), 0);
	assert_int_equal(tls_flow_endpoint_parse("[fd00::1]:9000", &k, true), -EINVAL);
	memset(&k, 0, sizeof(k));
	assert_int_equal(tls_flow_endpoint_parse("[fd00::1]:9000", &k, true), 0);
	assert_int_equal(ntohs(k.rport), 9000);
	assert_int_equal(tls_flow_endpoint_parse("fd00::1:9000", &k, true), -EINVAL);
	assert_int_equal(tls_flow_endpoint_parse("1.2.3.4", &k, true), -EINVAL);
	assert_int_equal(tls_flow_endpoint_parse(":80", &k, true), -EINVAL);
	assert_int_equal(tls_flow_endpoint_parse(NULL, &k, true), -EINVAL);
}

static int count_char(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_csv(void **state)
{
	struct sim *m = calibrated();
	struct tls_stats_flow_info fl[64];
	struct tls_stats_job_info j;
	char *text = NULL, *line;
	size_t len = 0, n;
	int cols;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	assert_int_equal(tls_stats_csv_header(f), 0);
	assert_int_equal(tls_stats_job(m->s, 1, &j), 0);
	assert_int_equal(tls_stats_csv_job(f, m->t, &j), 0);
	n = tls_stats_flows(m->s, 1, fl, 64);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tls_stats_csv_flow(f, m->t, &fl[i]), 0);
	/* a row with unknowns: empty fields */
	memset(&j, 0, sizeof(j));
	j.job = 9;
	j.est.b_wk = j.est.b_req = j.est.p_direct = j.est.p_solved = NAN;
	assert_int_equal(tls_stats_csv_job(f, m->t, &j), 0);
	fclose(f);
	/* n is 0: job 1's flows have been idle longer than the group window */
	assert_non_null(strstr(text, ",flow,1,tcp,198.18.0.1:9001,198.19.0.0:40000,0,4720000,"));
	assert_non_null(strstr(text, ",job,9,,,,0,0,0,0,0.000000,0.000000,,,,\n"));
	line = strtok(text, "\n");
	cols = count_char(line, ',');
	assert_int_equal(cols, 15);
	n = 0;
	while ((line = strtok(NULL, "\n"))) {
		assert_int_equal(count_char(line, ','), cols);
		n++;
	}
	assert_int_equal(n, 1 + 4 + 1);
	free(text);
	sim_stop(m);
}

/* The n sweep: one row per observation, as the JSON has them. */
static void test_csv_obs(void **state)
{
	struct sim *m = calibrated();
	struct tls_stats_obs o[16];
	char *text = NULL, *line, want[128];
	size_t len = 0, n;
	FILE *f;

	(void)state;
	n = tls_stats_observations(m->s, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, o, 16);
	assert_true(n >= 2 && n <= 16);
	f = open_memstream(&text, &len);
	assert_int_equal(tls_stats_csv_obs_header(f), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tls_stats_csv_obs(f, &o[i]), 0);
	fclose(f);
	line = strtok(text, "\n");
	assert_string_equal(line, "job,n,retired,used,active_s,unsat_active_s,bytes,b_wk_Bps,"
				  "b_req_Bps,p_direct,p_solved,use");
	for (size_t i = 0; i < n; i++) {
		line = strtok(NULL, "\n");
		assert_non_null(line);
		assert_int_equal(count_char(line, ','), 11);
		snprintf(want, sizeof(want), "%u,%u,%d,%d,%.6f,", o[i].job, o[i].n, o[i].retired,
			 o[i].use == TLS_OBS_USED, o[i].acc.active_ns / 1e9);
		assert_true(!strncmp(line, want, strlen(want)));
		assert_non_null(strstr(line, tls_obs_use_str(o[i].use)));
	}
	assert_null(strtok(NULL, "\n"));
	free(text);
	sim_stop(m);
}

int run_stats_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formulas),
		cmocka_unit_test(test_fit_arrays),
		cmocka_unit_test(test_fit_refuses),
		cmocka_unit_test(test_ground_truth),
		cmocka_unit_test(test_ground_truth_noisy),
		cmocka_unit_test(test_flows_read_slower),
		cmocka_unit_test(test_no_samples),
		cmocka_unit_test(test_one_sample_and_zero_period),
		cmocka_unit_test(test_job_counter_reset),
		cmocka_unit_test(test_flow_resets),
		cmocka_unit_test(test_flow_hints),
		cmocka_unit_test(test_flow_hint_refused),
		cmocka_unit_test(test_flow_unchanged),
		cmocka_unit_test(test_jobs_at_rest),
		cmocka_unit_test(test_burst_active_time),
		cmocka_unit_test(test_steady_flow_coarse_clock),
		cmocka_unit_test(test_slow_flow_gaps),
		cmocka_unit_test(test_on_off_bursts),
		cmocka_unit_test(test_obs_b_req_of_job),
		cmocka_unit_test(test_transitional_n),
		cmocka_unit_test(test_flow_read_late),
		cmocka_unit_test(test_eviction_bounded),
		cmocka_unit_test(test_stale_record),
		cmocka_unit_test(test_observations_bounded),
		cmocka_unit_test(test_forget_and_reset),
		cmocka_unit_test(test_conf_check),
		cmocka_unit_test(test_spotdnn_text),
		cmocka_unit_test(test_calib_json),
		cmocka_unit_test(test_flow_job_json),
		cmocka_unit_test(test_json_bad_input),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_csv_obs),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
