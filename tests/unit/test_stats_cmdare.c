// SPDX-License-Identifier: GPL-2.0-only
/*
 * CM-DARE's verdicts (issue 17, Deliver 6): the straggler flag on
 * synthetic workers, then on synthetic streams through the engine.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "stats_cmdare.h"
#include "stats_export.h"
#include "unit.h"

#define MS 1000000ULL
#define S  1000000000ULL

/* n workers of job 1 since 1 s, throughputs tp[i] B/s until 11 s */
static void workers(struct tls_stats_flow_info *f, const double *tp, size_t n, double b_wk)
{
	for (size_t i = 0; i < n; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].job = 1;
		f[i].first_ns = 1 * S;
		f[i].last_active_ns = 11 * S; /* active in the last sample */
		f[i].acc.bytes = (uint64_t)(tp[i] * 10);
		f[i].est.b_wk = b_wk;
	}
}

static void setup(struct tls_stats_link_info *l, struct tls_stats_job_info *j, double sat_share)
{
	memset(l, 0, sizeof(*l));
	memset(j, 0, sizeof(*j));
	l->last_ns = 11 * S;
	l->b_ps = 20e6;
	j->job = 1;
	j->n = 5;
	j->active_ns = 10 * S;
	j->window_ns = 4 * S;
	j->sat_active_ns = (uint64_t)(sat_share * 10 * S);
	j->est.b_req = 10e6;
}

static void test_straggler_synthetic(void **state)
{
	static const double one_low[5] = { 10e6, 10.2e6, 9.9e6, 10.1e6, 5e6 },
			    even[5] = { 5e6, 5.1e6, 4.9e6, 5e6, 5.05e6 },
			    most_low[5] = { 10e6, 10.1e6, 5e6, 5.1e6, 4.9e6 },
			    noisy[5] = { 10e6, 13e6, 7e6, 11e6, 6e6 };
	struct tls_stats_flow_info f[5];
	struct tls_stats_link_info l;
	struct tls_stats_job_info j;
	enum tls_straggler out[5];

	(void)state;
	/* the link idle (10% saturated): the one low worker is the straggler */
	setup(&l, &j, 0.1);
	workers(f, one_low, 5, 4e6);
	assert_int_equal(tls_straggler_flags(&l, &j, f, 5, out), TLS_STRAG_NONE);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], i == 4 ? TLS_STRAG_WORKER : TLS_STRAG_NONE);
	/* the low one gone 5 s ago (beyond the 4 s window): not judged */
	f[4].last_active_ns = 6 * S;
	tls_straggler_flags(&l, &j, f, 5, out);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
	/* all alike: nobody */
	workers(f, even, 5, 4e6);
	tls_straggler_flags(&l, &j, f, 5, out);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
	/* three of five low: the job's pace, not a worker's */
	workers(f, most_low, 5, 4e6);
	tls_straggler_flags(&l, &j, f, 5, out);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
	/* the peers' own spread is the threshold: 6 among 7..13 is no outlier */
	workers(f, noisy, 5, 4e6);
	tls_straggler_flags(&l, &j, f, 5, out);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
	/* iterations of 1.8 s, 200 kB a pull, all in phase, read 4 s in while
	 * one worker's third pull is still coming (400 against 600 kB): on
	 * pace, no verdict; one a whole pull further behind (200 kB) is */
	{
		static const double in_phase[4] = { 150e3, 150e3, 150e3, 100e3 },
				    behind[4] = { 150e3, 150e3, 150e3, 50e3 };

		workers(f, in_phase, 4, 4e6);
		for (int i = 0; i < 4; i++)
			f[i].acc.bytes = (uint64_t)(in_phase[i] * 4);
		l.last_ns = 5 * S;
		for (int i = 0; i < 4; i++)
			f[i].last_active_ns = 5 * S;
		j.iter_ns = 1800 * MS;
		j.n = 4;
		tls_straggler_flags(&l, &j, f, 4, out);
		for (int i = 0; i < 4; i++)
			assert_int_equal(out[i], TLS_STRAG_NONE);
		workers(f, behind, 4, 4e6);
		for (int i = 0; i < 4; i++) {
			f[i].acc.bytes = (uint64_t)(behind[i] * 4);
			f[i].last_active_ns = 5 * S;
		}
		tls_straggler_flags(&l, &j, f, 4, out);
		for (int i = 0; i < 4; i++)
			assert_int_equal(out[i], i == 3 ? TLS_STRAG_WORKER : TLS_STRAG_NONE);
		setup(&l, &j, 0.1);
	}
	/* two workers: no peers to tell an outlier by */
	workers(f, one_low + 3, 2, 4e6);
	tls_straggler_flags(&l, &j, f, 2, out);
	assert_int_equal(out[0] | out[1], TLS_STRAG_NONE);

	/* the link saturated 90% of the time, every worker's B_wk (4 MB/s =
	 * B_ps / n) below B_req (10): the PS */
	setup(&l, &j, 0.9);
	workers(f, even, 5, 4e6);
	assert_int_equal(tls_straggler_flags(&l, &j, f, 5, out), TLS_STRAG_PS);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
	/* one worker at its demand: not all held back */
	f[2].est.b_wk = 10e6;
	assert_int_equal(tls_straggler_flags(&l, &j, f, 5, out), TLS_STRAG_NONE);
	/* B_req within B_ps / n: the link could serve them all, not the PS */
	f[2].est.b_wk = 4e6;
	j.est.b_req = 3.9e6;
	assert_int_equal(tls_straggler_flags(&l, &j, f, 5, out), TLS_STRAG_NONE);
	/* no active time: no verdict */
	j.active_ns = 0;
	assert_int_equal(tls_straggler_flags(&l, &j, f, 5, out), TLS_STRAG_NONE);
}

/*
 * Streams through the engine: 4 workers of job 1 (flow i from
 * 198.19.0.1i), the link 8 Mbit/s (1 MB/s). Until solo_ns worker 0 alone
 * at 0.5 MB/s (its demand, B_req), then rates[i] B/s each until end; the
 * job's verdicts at the end.
 */
static enum tls_straggler stream(const double *rates, uint64_t solo_ns, uint64_t end,
				 enum tls_straggler *out)
{
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	struct tls_stats_link_info l;
	struct tls_stats_flow_info *f;
	struct tls_stats *s;
	uint64_t bytes[4] = {};
	enum tls_straggler js;
	size_t n;

	tls_stats_conf_defaults(&c);
	c.link_bps = 8000000;
	c.clock_slack_ns = 0;
	assert_int_equal(tls_stats_new(&c, &s), 0);
	for (uint64_t t = 0; t <= end; t += 100 * MS) {
		uint64_t sum = 0;

		assert_int_equal(tls_stats_begin(s, t), 0);
		for (unsigned int i = 0; i < 4; i++) {
			struct tls_flow_key k = { .proto = IPPROTO_TCP };
			struct tls_flow r = { .job = 1 };
			char ra[32];

			if (t && t <= solo_ns)
				bytes[i] += i ? 0 : 50000;
			else if (t)
				bytes[i] += (uint64_t)(rates[i] / 10);
			sum += bytes[i];
			snprintf(ra, sizeof(ra), "198.19.0.1%u:4000%u", i, i);
			assert_int_equal(tls_flow_endpoint_parse("198.18.0.1:9000", &k, false), 0);
			assert_int_equal(tls_flow_endpoint_parse(ra, &k, true), 0);
			r.bytes = bytes[i];
			r.packets = bytes[i] / 1000;
			r.first_ns = !bytes[i] ? 0 : i && solo_ns ? solo_ns + 50 * MS : 50 * MS;
			r.last_ns = t;
			if (bytes[i])
				assert_int_equal(tls_stats_add_flow(s, &k, &r), 0);
		}
		assert_int_equal(tls_stats_add_job(s, 1, sum), 0);
		tls_stats_flows_read(s);
		assert_int_equal(tls_stats_end(s), 0);
	}
	tls_stats_link(s, &l);
	assert_int_equal(tls_stats_job(s, 1, &j), 0);
	f = tls_stats_flows_all(s, 1, &n);
	assert_int_equal(n, 4);
	js = tls_straggler_flags(&l, &j, f, n, out);
	free(f);
	tls_stats_free(s);
	return js;
}

static void test_straggler_streams(void **state)
{
	/* 0.6 of the link in all: idle; worker 2 at a third of its peers' pace */
	static const double idle[4] = { 0.18e6, 0.18e6, 0.06e6, 0.18e6 },
			    /* the link's 1 MB/s shared: each below its 0.5 */
		full[4] = { 0.25e6, 0.25e6, 0.25e6, 0.25e6 };
	enum tls_straggler out[4];

	(void)state;
	assert_int_equal(stream(idle, 0, 5 * S, out), TLS_STRAG_NONE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i], i == 2 ? TLS_STRAG_WORKER : TLS_STRAG_NONE);
	/* 2 s alone unsaturated, 6 s saturated: the PS, no worker */
	assert_int_equal(stream(full, 2 * S, 8 * S, out), TLS_STRAG_PS);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i], TLS_STRAG_NONE);
}

/* Wall-clock stamps keep their microseconds under tlsd's "%.9g" for
 * doubles, which rounds seconds since the epoch to tens of seconds (the
 * CSV's utc_s was 4 s off for it). */
static void test_seconds_us_exact(void **state)
{
	struct json_object *o;

	(void)state;
	json_c_set_serialization_double_format("%.9g", JSON_C_OPTION_GLOBAL);
	o = tls_json_seconds_us(1795787805.76041);
	assert_non_null(o);
	assert_string_equal(json_object_to_json_string(o), "1795787805.760410");
	json_object_put(o);
	o = json_object_new_double(1795787805.76041);
	assert_string_equal(json_object_to_json_string(o), "1.79578781e+09");
	json_object_put(o);
	assert_null(tls_json_seconds_us(NAN));
	json_c_set_serialization_double_format(NULL, JSON_C_OPTION_GLOBAL);
}

int run_stats_cmdare_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seconds_us_exact),
		cmocka_unit_test(test_straggler_synthetic),
		cmocka_unit_test(test_straggler_streams),
	};

	return cmocka_run_group_tests_name("stats_cmdare", tests, NULL, NULL);
}
