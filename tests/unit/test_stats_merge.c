// SPDX-License-Identifier: GPL-2.0-only
/*
 * tls_calib_merge: a cluster of PS hosts whose exports are one workload's
 * shares must merge into the cluster's calibration, the one spotDNN's
 * model describes: a synthetic cluster with a known P(n), split over two
 * hosts, merged back.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats_merge.h"
#include "unit.h"

/* The cluster: B_ps 100 MB/s, B_req 40 MB/s per worker, P(n) = 0.5 sqrt(n) - 0.3 */
#define B_PS  100e6
#define B_REQ 40e6
#define A     0.5
#define B     0.3

/* One host's share (frac of every rate) of the cluster's observation at n. */
static void share_obs(struct tls_stats_obs *o, unsigned int n, double frac, uint64_t active_ns)
{
	double p = tls_spotdnn_p(A, B, n);

	memset(o, 0, sizeof(*o));
	o->job = 1;
	o->n = n;
	o->acc.active_ns = active_ns;
	o->acc.bytes = (uint64_t)(tls_spotdnn_b_wk(p, B_PS, n, B_REQ) * frac * active_ns / 1e9);
	o->est.b_wk = tls_spotdnn_b_wk(p, B_PS, n, B_REQ) * frac;
	o->est.b_req = B_REQ * frac;
	o->est.p_direct = p;
	o->est.p_solved = tls_spotdnn_p_solve(o->est.b_wk, B_PS * frac, n, o->est.b_req);
	o->use = TLS_OBS_USED;
}

static void share_calib(struct tls_stats_calib *c, double frac)
{
	memset(c, 0, sizeof(*c));
	c->job = 1;
	c->source = TLS_FIT_SOLVED;
	c->link.link_rate = B_PS * frac;
	c->link.b_ps = B_PS * frac;
	c->link.b_ps_measured = true;
	c->link.sat_rate = B_PS * frac;
	c->link.time_ns = 30000000000ULL;
	c->link.sat_ns = 10000000000ULL;
	c->b_req = B_REQ * frac;
}

static void test_merge_two_hosts(void **state)
{
	struct tls_stats_obs o1[4], o2[3], *m;
	struct tls_calib_part p[2];
	struct tls_stats_calib out;
	size_t nm, dropped;
	char err[256];

	(void)state;
	share_calib(&p[0].calib, 0.4);
	share_calib(&p[1].calib, 0.6);
	p[1].calib.job = 3;			  /* each host numbers its jobs */
	share_obs(&o1[0], 2, 0.4, 5000000000ULL); /* only host 1 saw n = 2 */
	share_obs(&o1[1], 4, 0.4, 5000000000ULL);
	share_obs(&o1[2], 6, 0.4, 5000000000ULL);
	share_obs(&o1[3], 5, 0.4, 5000000000ULL);
	o1[3].use = TLS_OBS_OTHER_JOB; /* another job's: left out */
	o1[3].job = 2;
	share_obs(&o2[0], 4, 0.6, 4000000000ULL);
	share_obs(&o2[1], 6, 0.6, 6000000000ULL);
	share_obs(&o2[2], 9, 0.6, 6000000000ULL); /* only host 2 saw n = 9 */
	p[0].obs = o1;
	p[0].nobs = 4;
	p[1].obs = o2;
	p[1].nobs = 3;
	assert_int_equal(tls_calib_merge(p, 2, &out, &m, &nm, &dropped, err, sizeof(err)), 0);
	/* the cluster's B_ps and B_req: the sums */
	assert_true(fabs(out.link.b_ps - B_PS) < 1e-6 * B_PS);
	assert_true(fabs(out.b_req - B_REQ) < 1e-6 * B_REQ);
	assert_true(out.link.b_ps_measured);
	assert_int_equal(out.job, TLS_STATS_ALL_JOBS); /* ids 1 and 3 */
	/* n = 4 and 6 merged; 2 and 9 (one host each) dropped */
	assert_int_equal(nm, 2);
	assert_int_equal(dropped, 2);
	assert_int_equal(m[0].n, 4);
	assert_int_equal(m[1].n, 6);
	/* the smallest host's active time: what both saw */
	assert_int_equal(m[0].acc.active_ns, 4000000000ULL);
	for (size_t i = 0; i < nm; i++) {
		double p_true = tls_spotdnn_p(A, B, m[i].n);

		assert_true(fabs(m[i].est.b_wk - tls_spotdnn_b_wk(p_true, B_PS, m[i].n, B_REQ)) <
			    1e-6 * B_REQ);
		assert_true(fabs(m[i].est.p_solved - p_true) < 1e-9);
		assert_true(fabs(m[i].est.p_direct - p_true) < 1e-9);
		assert_int_equal(m[i].use, TLS_OBS_USED);
	}
	/* the fit over the merged observations gives the cluster's P(n) back */
	assert_int_equal(out.fit_err, 0);
	assert_true(fabs(out.fit.a - A) < 1e-6);
	assert_true(fabs(out.fit.b - B) < 1e-6);
	free(m);
}

static void test_merge_refuses(void **state)
{
	struct tls_stats_obs o1[2], o2[1], *m;
	struct tls_calib_part p[2];
	struct tls_stats_calib out;
	size_t nm, dropped;
	char err[256];

	(void)state;
	share_calib(&p[0].calib, 0.5);
	share_calib(&p[1].calib, 0.5);
	share_obs(&o1[0], 4, 0.5, 5000000000ULL);
	share_obs(&o1[1], 4, 0.5, 5000000000ULL);
	o1[1].job = 2; /* an all-jobs export with two jobs */
	share_obs(&o2[0], 4, 0.5, 5000000000ULL);
	p[0].obs = o1;
	p[0].nobs = 2;
	p[1].obs = o2;
	p[1].nobs = 1;
	assert_int_equal(tls_calib_merge(p, 2, &out, &m, &nm, &dropped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "export 1 mixes several jobs"));
	assert_null(m);
	p[0].nobs = 1;
	p[1].calib.source = TLS_FIT_DIRECT;
	assert_int_equal(tls_calib_merge(p, 2, &out, &m, &nm, &dropped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "export 2 has P direct"));
	assert_int_equal(tls_calib_merge(p, 0, &out, &m, &nm, &dropped, err, sizeof(err)), -EINVAL);
	/* one host's unknown B_ps: the cluster's is unknown too, not the rest's */
	p[1].calib.source = TLS_FIT_SOLVED;
	p[1].calib.link.b_ps = NAN;
	assert_int_equal(tls_calib_merge(p, 2, &out, &m, &nm, &dropped, err, sizeof(err)), 0);
	assert_true(isnan(out.link.b_ps));
	free(m);
}

int run_stats_merge_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_hosts),
		cmocka_unit_test(test_merge_refuses),
	};

	return cmocka_run_group_tests_name("stats_merge", tests, NULL, NULL);
}
