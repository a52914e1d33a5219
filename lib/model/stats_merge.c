// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several PS hosts' calibrations as one (see stats_merge.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_merge.h"

/* As the engine's (stats.c): B_req must exceed B_ps / n by this much for
 * P to play a role in the formula. */
#define REGIME_MARGIN 0.05

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The cluster's link: rates summed (NaN if one host's is unknown), times
 * the smallest host's, counters summed. */
static void merge_link(struct tls_stats_link_info *o, const struct tls_stats_link_info *l,
		       bool first)
{
	if (first) {
		*o = *l;
		return;
	}
	o->link_rate += l->link_rate;
	o->b_ps += l->b_ps;
	o->b_ps_measured = o->b_ps_measured && l->b_ps_measured;
	o->sat_rate += l->sat_rate;
	o->rate += l->rate;
	o->rate_avg += l->rate_avg;
	o->saturated = o->saturated && l->saturated;
	o->time_ns = min_u64(o->time_ns, l->time_ns);
	o->sat_ns = min_u64(o->sat_ns, l->sat_ns);
	o->last_ns = max_u64(o->last_ns, l->last_ns);
	o->samples += l->samples;
	o->skipped += l->skipped;
	o->rejected += l->rejected;
	o->resets += l->resets;
	o->flows += l->flows;
	o->max_flows += l->max_flows;
	o->flows_expired += l->flows_expired;
	o->flows_evicted += l->flows_evicted;
	o->flows_dropped += l->flows_dropped;
	o->obs += l->obs;
	o->max_obs += l->max_obs;
	o->obs_evicted += l->obs_evicted;
}

/* The part's observation of the workload at n, NULL if none. */
static const struct tls_stats_obs *part_obs(const struct tls_calib_part *p, unsigned int n)
{
	for (size_t i = 0; i < p->nobs; i++)
		if (p->obs[i].use != TLS_OBS_OTHER_JOB && p->obs[i].n == n)
			return &p->obs[i];
	return NULL;
}

/* One job's observations per part: a part of an all-jobs export that has
 * several would be summed with another host's of another job. */
static int check_part(const struct tls_calib_part *p, size_t k, char *err, size_t errlen)
{
	const struct tls_stats_obs *first = NULL;

	for (size_t i = 0; i < p->nobs; i++) {
		const struct tls_stats_obs *o = &p->obs[i];

		if (o->use == TLS_OBS_OTHER_JOB)
			continue;
		if (first &&
		    (o->job != first->job || o->retired != first->retired || o->n == first->n)) {
			snprintf(err, errlen,
				 "export %zu mixes several jobs' observations (job %u and %u%s): "
				 "export one job (tlsctl -j calibrate JOB)",
				 k + 1, first->job, o->job, o->n == first->n ? " at one n" : "");
			return -EINVAL;
		}
		if (!first)
			first = o;
	}
	return 0;
}

static double obs_p(const struct tls_stats_obs *o, enum tls_fit_source src)
{
	return src == TLS_FIT_DIRECT ? o->est.p_direct : o->est.p_solved;
}

/* The observation at n summed over the parts (every part has one). */
static void merge_obs(const struct tls_calib_part *parts, size_t nparts,
		      const struct tls_stats_calib *out, unsigned int n, struct tls_stats_obs *m)
{
	double p_w = 0, b_req_own = 0;

	memset(m, 0, sizeof(*m));
	m->job = out->job == TLS_STATS_ALL_JOBS ? part_obs(&parts[0], n)->job : out->job;
	m->n = n;
	m->est.b_wk = 0;
	for (size_t k = 0; k < nparts; k++) {
		const struct tls_stats_obs *o = part_obs(&parts[k], n);

		if (!k) {
			m->first_ns = o->first_ns;
			m->last_ns = o->last_ns;
			m->acc = o->acc;
			m->use = o->use;
		} else {
			m->first_ns = min_u64(m->first_ns, o->first_ns);
			m->last_ns = max_u64(m->last_ns, o->last_ns);
			m->acc.bytes += o->acc.bytes;
			m->acc.unsat_bytes += o->acc.unsat_bytes;
			m->acc.active_ns = min_u64(m->acc.active_ns, o->acc.active_ns);
			m->acc.sat_active_ns = min_u64(m->acc.sat_active_ns, o->acc.sat_active_ns);
			m->acc.unsat_ns = min_u64(m->acc.unsat_ns, o->acc.unsat_ns);
			/* a reason it is not in one host's fit keeps it out of the merged one */
			if (m->use == TLS_OBS_USED || m->use == TLS_OBS_UNCONTENDED)
				m->use = o->use == TLS_OBS_UNCONTENDED ? m->use : o->use;
		}
		m->est.b_wk += o->est.b_wk;
		b_req_own += o->est.b_req;
		p_w += o->est.p_direct * o->acc.active_ns;
	}
	m->acc.n_ns = (double)n * m->acc.active_ns;
	m->est.n_mean = n;
	/* as the engine: the observation's B_req is the workload's */
	m->est.b_req = isnan(out->b_req) ? b_req_own : out->b_req;
	{
		uint64_t t = 0;

		for (size_t k = 0; k < nparts; k++)
			t += part_obs(&parts[k], n)->acc.active_ns;
		m->est.p_direct = t ? p_w / t : NAN;
	}
	m->est.p_solved = tls_spotdnn_p_solve(m->est.b_wk, out->link.b_ps, n, m->est.b_req);
	if (m->use != TLS_OBS_USED && m->use != TLS_OBS_UNCONTENDED)
		return;
	if (!(m->est.b_req > out->link.b_ps / n * (1 + REGIME_MARGIN)))
		m->use = TLS_OBS_UNCONTENDED;
	else if (!isfinite(obs_p(m, out->source)))
		m->use = TLS_OBS_NO_P;
	else
		m->use = TLS_OBS_USED;
}

static int fit_obs(const struct tls_stats_obs *obs, size_t cnt, enum tls_fit_source src,
		   struct tls_stats_fit *fit)
{
	double *n = calloc(cnt + 1, sizeof(*n)), *y = calloc(cnt + 1, sizeof(*y)),
	       *w = calloc(cnt + 1, sizeof(*w));
	size_t k = 0;
	int ret = -ENOMEM;

	if (n && y && w) {
		for (size_t i = 0; i < cnt; i++) {
			if (obs[i].use != TLS_OBS_USED)
				continue;
			n[k] = obs[i].n;
			y[k] = obs_p(&obs[i], src);
			w[k++] = obs[i].acc.active_ns / 1e9; /* as the engine weighs */
		}
		ret = tls_fit_p_sqrt(n, y, w, k, fit);
	}
	free(n);
	free(y);
	free(w);
	return ret;
}

static int u_cmp(const void *pa, const void *pb)
{
	const struct tls_stats_obs *a = pa, *b = pb;

	return (a->n > b->n) - (a->n < b->n);
}

int tls_calib_merge(const struct tls_calib_part *parts, size_t nparts, struct tls_stats_calib *out,
		    struct tls_stats_obs **obs, size_t *nobs, size_t *dropped, char *err,
		    size_t errlen)
{
	struct tls_stats_obs *m;
	size_t cnt = 0, all = 0;
	int ret;

	*obs = NULL;
	*nobs = 0;
	*dropped = 0;
	memset(out, 0, sizeof(*out));
	if (!nparts) {
		snprintf(err, errlen, "no export to merge");
		return -EINVAL;
	}
	for (size_t k = 0; k < nparts; k++) {
		if (parts[k].calib.source != parts[0].calib.source) {
			snprintf(err, errlen,
				 "export %zu has P %s, export 1 P %s: calibrate all with one "
				 "--source",
				 k + 1,
				 parts[k].calib.source == TLS_FIT_DIRECT ? "direct" : "solved",
				 parts[0].calib.source == TLS_FIT_DIRECT ? "direct" : "solved");
			return -EINVAL;
		}
		ret = check_part(&parts[k], k, err, errlen);
		if (ret)
			return ret;
		merge_link(&out->link, &parts[k].calib.link, !k);
		out->b_req = k ? out->b_req + parts[k].calib.b_req : parts[k].calib.b_req;
		all += parts[k].nobs;
	}
	out->source = parts[0].calib.source;
	/* job ids are each host's own: one id only if all agree */
	out->job = parts[0].calib.job;
	for (size_t k = 1; k < nparts; k++)
		if (parts[k].calib.job != out->job)
			out->job = TLS_STATS_ALL_JOBS;
	m = calloc(all + 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* the n of part 0 that every part has; those of part 0 missing in one
	 * and those of the others missing in part 0 are dropped */
	for (size_t i = 0; i < parts[0].nobs; i++) {
		const struct tls_stats_obs *o = &parts[0].obs[i];
		bool everywhere = true;

		if (o->use == TLS_OBS_OTHER_JOB)
			continue;
		for (size_t k = 1; k < nparts && everywhere; k++)
			everywhere = part_obs(&parts[k], o->n) != NULL;
		if (everywhere)
			merge_obs(parts, nparts, out, o->n, &m[cnt++]);
	}
	for (size_t k = 0; k < nparts; k++)
		for (size_t i = 0; i < parts[k].nobs; i++)
			if (parts[k].obs[i].use != TLS_OBS_OTHER_JOB)
				(*dropped)++;
	*dropped -= cnt * nparts;
	qsort(m, cnt, sizeof(*m), u_cmp);
	out->fit_err = fit_obs(m, cnt, out->source, &out->fit);
	if (out->fit_err == -ENOMEM) {
		free(m);
		return -ENOMEM;
	}
	*obs = m;
	*nobs = cnt;
	return 0;
}
