// SPDX-License-Identifier: GPL-2.0-only
/*
 * CM-DARE's view of the statistics (see stats_cmdare.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats_cmdare.h"
#include "stats_export.h"

/* The robust outlier rule: 3 standard deviations, a MAD of normal noise
 * being 1/1.4826 of its standard deviation. */
#define OUTLIER_SIGMAS 3.0
#define MAD_TO_SIGMA   1.4826

const char *tls_straggler_str(enum tls_straggler s)
{
	return s == TLS_STRAG_WORKER ? "worker" : s == TLS_STRAG_PS ? "ps" : NULL;
}

double tls_flow_throughput(const struct tls_stats_flow_info *f, uint64_t now_ns)
{
	if (!f->first_ns || now_ns <= f->first_ns)
		return NAN;
	return f->acc.bytes * 1e9 / (now_ns - f->first_ns);
}

double tls_job_sat_share(const struct tls_stats_job_info *j)
{
	return j->active_ns ? (double)j->sat_active_ns / j->active_ns : NAN;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A worker of the job now: active within its window (the one n counts
 * by). A flow that ended stays tracked a while, its throughput falling:
 * it is gone, not straggling. */
static bool present(const struct tls_stats_flow_info *f, const struct tls_stats_job_info *j,
		    const struct tls_stats_link_info *l)
{
	return f->last_active_ns &&
	       (!j->window_ns || l->last_ns - f->last_active_ns <= j->window_ns);
}

/* The throughput of a present worker, else NaN. */
static double pace(const struct tls_stats_flow_info *f, const struct tls_stats_job_info *j,
		   const struct tls_stats_link_info *l)
{
	return present(f, j, l) ? tls_flow_throughput(f, l->last_ns) : NAN;
}

enum tls_straggler tls_straggler_flags(const struct tls_stats_link_info *l,
				       const struct tls_stats_job_info *j,
				       const struct tls_stats_flow_info *fl, size_t n,
				       enum tls_straggler *out)
{
	double share = tls_job_sat_share(j), *t, *dev, med, mad, floor_t;
	size_t low = 0, known = 0, here = 0;
	bool all_held = true;

	for (size_t i = 0; i < n; i++) {
		out[i] = TLS_STRAG_NONE;
		here += present(&fl[i], j, l);
	}
	if (!(share >= 0) || !here)
		return TLS_STRAG_NONE;
	if (share > 0.5) {
		/* saturated: every worker below its demand, in the contended regime */
		if (!(j->est.b_req > l->b_ps / (j->n ? j->n : here)))
			return TLS_STRAG_NONE;
		for (size_t i = 0; i < n && all_held; i++)
			all_held = !present(&fl[i], j, l) || fl[i].est.b_wk < j->est.b_req;
		return all_held ? TLS_STRAG_PS : TLS_STRAG_NONE;
	}
	if (here < 3)
		return TLS_STRAG_NONE;
	t = malloc(n * sizeof(*t));
	dev = malloc(n * sizeof(*dev));
	if (!t || !dev)
		goto out;
	for (size_t i = 0; i < n; i++) {
		double x = pace(&fl[i], j, l);

		if (isfinite(x))
			t[known++] = x;
	}
	if (known < 3)
		goto out;
	med = median(t, known);
	for (size_t i = 0; i < known; i++)
		dev[i] = fabs(t[i] - med);
	mad = median(dev, known);
	floor_t = med - OUTLIER_SIGMAS * MAD_TO_SIGMA * mad;
	for (size_t i = 0; i < n; i++) {
		double x = pace(&fl[i], j, l);

		/* and below it by more than one iteration's bytes over its
		 * lifetime: read mid-iteration, a worker that is on pace lacks
		 * at most that. An iteration's bytes at the peers' pace (the
		 * median), not at its own: at its own, a worker one pull short
		 * in the reading's instant was named (a CI run: 4 workers in
		 * phase, 3 pulls done against 2) */
		double res = isfinite(x) ? med * j->iter_ns / (l->last_ns - fl[i].first_ns) : 0;

		if (isfinite(x) && x + res < floor_t) {
			out[i] = TLS_STRAG_WORKER;
			low++;
		}
	}
	if (2 * low >= known) /* half or more: the job's pace, not a worker's */
		for (size_t i = 0; i < n; i++)
			out[i] = TLS_STRAG_NONE;
out:
	free(t);
	free(dev);
	return TLS_STRAG_NONE;
}

static struct json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static int add(struct json_object *o, const char *k, struct json_object *v, bool null_ok)
{
	if ((!v && !null_ok) || json_object_object_add(o, k, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

int tls_cmdare_link_json(struct json_object *o, const struct tls_stats_link_info *l,
			 double utc_off_s)
{
	return add(o, "last_sample_utc_s",
		   tls_json_seconds_us(l->last_ns ? l->last_ns / 1e9 + utc_off_s : NAN), true);
}

int tls_cmdare_job_json(struct json_object *o, const struct tls_stats_job_info *j,
			enum tls_straggler s)
{
	if (add(o, "sat_share", num(tls_job_sat_share(j)), true))
		return -ENOMEM;
	return add(o, "straggler", str_or_null(tls_straggler_str(s)), true);
}

int tls_cmdare_flow_json(struct json_object *o, const struct tls_stats_flow_info *f,
			 uint64_t now_ns, double utc_off_s, enum tls_straggler s)
{
	if (add(o, "first_utc_s",
		tls_json_seconds_us(f->first_ns ? f->first_ns / 1e9 + utc_off_s : NAN), true) ||
	    add(o, "last_active_utc_s",
		tls_json_seconds_us(f->last_active_ns ? f->last_active_ns / 1e9 + utc_off_s : NAN),
		true) ||
	    add(o, "throughput_Bps", num(tls_flow_throughput(f, now_ns)), true))
		return -ENOMEM;
	return add(o, "straggler", str_or_null(tls_straggler_str(s)), true);
}
