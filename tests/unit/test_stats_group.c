// SPDX-License-Identifier: GPL-2.0-only
/*
 * n as spotDNN counts it (issue 17, Deliver 2): worker hosts over a window
 * of twice the job's iteration. The helpers, then the engine on a
 * synthetic job: two worker hosts, one running three workers (a 3-GPU
 * instance), bursts of 0.3 s every 2 s, longer than the 1 s minimum window.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "stats.h"
#include "stats_export.h"
#include "stats_group.h"
#include "unit.h"

#define MS 1000000ULL
#define S  1000000000ULL

static void item(struct tls_group_item *it, uint32_t job, uint32_t idx, uint8_t host,
		 uint64_t delta)
{
	memset(it, 0, sizeof(*it));
	it->job = job;
	it->idx = idx;
	it->family = AF_INET;
	it->addr[0] = 198;
	it->addr[1] = 19;
	it->addr[3] = host;
	it->delta = delta;
}

static void test_group_hosts(void **state)
{
	struct tls_group_item it[6];
	uint32_t hosts[TLS_MAX_JOBS];

	(void)state;
	item(&it[0], 1, 0, 10, 10);
	item(&it[1], 1, 1, 11, 50);
	item(&it[2], 1, 2, 10, 20);
	item(&it[3], 2, 3, 10, 0);
	item(&it[4], 1, 4, 10, 30);
	item(&it[5], 2, 5, 10, 0);
	tls_group_hosts(it, 6, hosts);
	assert_int_equal(hosts[1], 2); /* 198.19.0.10 and .11 */
	assert_int_equal(hosts[2], 1); /* the same address in another job: its own */
	assert_int_equal(hosts[0], 0);
	for (int i = 0; i < 6; i++) {
		double want = it[i].job == 2 ? 1.0 : it[i].addr[3] == 11 ? 1.0 : it[i].delta / 60.0;

		assert_true(fabs(it[i].share - want) < 1e-12);
	}
}

static void test_group_burst_window(void **state)
{
	uint64_t iter = 0, last = 0;

	(void)state;
	tls_group_burst(&iter, &last, 1 * S, 60 * S);
	assert_int_equal(iter, 0); /* one burst: no spacing yet */
	tls_group_burst(&iter, &last, 3 * S, 60 * S);
	assert_int_equal(iter, 2 * S);
	tls_group_burst(&iter, &last, 7 * S, 60 * S); /* one late: a quarter of the way */
	assert_int_equal(iter, 2 * S + S / 2);
	tls_group_burst(&iter, &last, 100 * S, 60 * S); /* a pause, not an iteration */
	assert_int_equal(iter, 2 * S + S / 2);
	assert_int_equal(last, 100 * S);
	assert_int_equal(tls_group_window(0, S, 0), S);
	assert_int_equal(tls_group_window(0, S, 300 * MS), S);
	assert_int_equal(tls_group_window(0, S, 3 * S), 6 * S);
	assert_int_equal(tls_group_window(5 * S, S, 3 * S), 5 * S);
}

/* Flow i: host 10 for i < 3, host 11 for i = 3. */
static void key_of(struct tls_flow_key *k, unsigned int i)
{
	char r[32];

	memset(k, 0, sizeof(*k));
	k->proto = IPPROTO_TCP;
	snprintf(r, sizeof(r), "198.19.0.%u:%u", i < 3 ? 10 : 11, 40000 + i);
	assert_int_equal(tls_flow_endpoint_parse("198.18.0.1:9000", k, false), 0);
	assert_int_equal(tls_flow_endpoint_parse(r, k, true), 0);
}

/*
 * Bursts of 0.3 s every 2 s (from 0.1 s), each flow at 1 MB/s while it
 * sends, samples every 100 ms until end; the job's info at the end.
 */
static struct tls_stats *run_bursts(const struct tls_stats_conf *c, uint64_t end,
				    struct tls_stats_job_info *j)
{
	struct tls_stats *s;
	uint64_t bytes[4] = {}, last[4] = {};

	assert_int_equal(tls_stats_new(c, &s), 0);
	for (uint64_t t = 0; t <= end; t += 100 * MS) {
		uint64_t ph = t % (2 * S);
		bool on = t > 0 && ph > 100 * MS && ph <= 400 * MS;

		assert_int_equal(tls_stats_begin(s, t), 0);
		for (unsigned int i = 0; i < 4; i++) {
			struct tls_flow_key k;
			struct tls_flow f;

			if (on) {
				bytes[i] += 100000; /* 1 MB/s over 100 ms */
				last[i] = t;
			}
			key_of(&k, i);
			memset(&f, 0, sizeof(f));
			f.job = 1;
			f.bytes = bytes[i];
			f.packets = bytes[i] / 1000;
			f.first_ns = bytes[i] ? 200 * MS : 0;
			f.last_ns = last[i];
			if (bytes[i])
				assert_int_equal(tls_stats_add_flow(s, &k, &f), 0);
		}
		assert_int_equal(tls_stats_add_job(s, 1, bytes[0] * 4), 0);
		tls_stats_flows_read(s);
		assert_int_equal(tls_stats_end(s), 0);
	}
	assert_int_equal(tls_stats_job(s, 1, j), 0);
	return s;
}

static void test_n_hosts_over_iteration(void **state)
{
	struct tls_stats_conf c;
	struct tls_stats_job_info j;
	struct tls_stats_obs o[8];
	struct tls_stats *s;
	double host_b_wk;
	unsigned int nf;
	size_t n;

	(void)state;
	tls_stats_conf_defaults(&c);
	c.clock_slack_ns = 0;
	c.min_obs_ns = 100 * MS;
	/* 1.6 s after the last burst's end (at 8.4 s): within twice the
	 * iteration (4 s), not within 1 s */
	s = run_bursts(&c, 10 * S, &j);
	assert_true(j.iter_ns > 1900 * MS && j.iter_ns < 2100 * MS);
	assert_int_equal(j.window_ns, 2 * j.iter_ns);
	assert_int_equal(j.n, 2); /* hosts */
	assert_int_equal(j.n_hosts, 2);
	assert_int_equal(j.n_flows, 4);
	/* the flows tracked alone (tlsd's weights for policy bursts) */
	assert_int_equal(tls_stats_job_flows(s, 1, &nf), 0);
	assert_int_equal(nf, j.nflows);
	assert_int_equal(nf, 4);
	assert_int_equal(tls_stats_job_flows(s, 2, &nf), -ENOENT);
	assert_int_equal(tls_stats_job_flows(s, TLS_MAX_JOBS, &nf), -ENOENT);
	/* one observation, n = 2, B_wk a host's: (3 + 1 flows' rate) / 2 */
	n = tls_stats_observations(s, 1, TLS_FIT_SOLVED, o, 8);
	assert_int_equal(n, 1);
	assert_int_equal(o[0].n, 2);
	host_b_wk = o[0].est.b_wk;
	tls_stats_free(s);

	/* per flow: n = 4, B_wk a flow's: half the hosts' mean (the engine's
	 * active time of a synthetic burst is its own business: within 10%) */
	c.n_flows = true;
	s = run_bursts(&c, 10 * S, &j);
	assert_int_equal(j.n, 4);
	n = tls_stats_observations(s, 1, TLS_FIT_SOLVED, o, 8);
	assert_int_equal(n, 1);
	assert_int_equal(o[0].n, 4);
	assert_true(fabs(o[0].est.b_wk - 1e6) < 0.1 * 1e6);
	assert_true(fabs(host_b_wk - 2 * o[0].est.b_wk) < 0.01 * host_b_wk);
	tls_stats_free(s);

	/* a fixed 1 s window: the workers drop out of n between bursts */
	c.n_flows = false;
	c.window_ns = 1 * S;
	s = run_bursts(&c, 10 * S, &j);
	assert_int_equal(j.window_ns, 1 * S);
	assert_int_equal(j.n, 0);
	tls_stats_free(s);
}

int run_stats_group_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_hosts),
		cmocka_unit_test(test_group_burst_window),
		cmocka_unit_test(test_n_hosts_over_iteration),
	};

	return cmocka_run_group_tests_name("stats_group", tests, NULL, NULL);
}
